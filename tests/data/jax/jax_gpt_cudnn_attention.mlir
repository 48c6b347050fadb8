module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x1024xbf16>, %arg1: tensor<2x256x1024xbf16>, %arg2: tensor<2x256xbf16>, %arg3: tensor<2x1024x256xbf16>, %arg4: tensor<2x256xbf16>, %arg5: tensor<2x256xbf16>, %arg6: tensor<2x256xbf16>, %arg7: tensor<2x256xbf16>, %arg8: tensor<2x256xbf16>, %arg9: tensor<2x256x256xbf16>, %arg10: tensor<2x768xbf16>, %arg11: tensor<2x256x768xbf16>, %arg12: tensor<512x256xbf16>, %arg13: tensor<i32>, %arg14: tensor<2x1024xbf16>, %arg15: tensor<2x256x1024xbf16>, %arg16: tensor<2x256xbf16>, %arg17: tensor<2x1024x256xbf16>, %arg18: tensor<2x256xbf16>, %arg19: tensor<2x256xbf16>, %arg20: tensor<2x256xbf16>, %arg21: tensor<2x256xbf16>, %arg22: tensor<2x256xbf16>, %arg23: tensor<2x256x256xbf16>, %arg24: tensor<2x768xbf16>, %arg25: tensor<2x256x768xbf16>, %arg26: tensor<512x256xbf16>, %arg27: tensor<2x1024xbf16>, %arg28: tensor<2x256x1024xbf16>, %arg29: tensor<2x256xbf16>, %arg30: tensor<2x1024x256xbf16>, %arg31: tensor<2x256xbf16>, %arg32: tensor<2x256xbf16>, %arg33: tensor<2x256xbf16>, %arg34: tensor<2x256xbf16>, %arg35: tensor<2x256xbf16>, %arg36: tensor<2x256x256xbf16>, %arg37: tensor<2x768xbf16>, %arg38: tensor<2x256x768xbf16>, %arg39: tensor<512x256xbf16>, %arg40: tensor<4x256xi32>, %arg41: tensor<4x256xi32>) -> (tensor<2x1024xbf16> {jax.result_info = "result[0]['layers']['fc1_b']"}, tensor<2x256x1024xbf16> {jax.result_info = "result[0]['layers']['fc1_w']"}, tensor<2x256xbf16> {jax.result_info = "result[0]['layers']['fc2_b']"}, tensor<2x1024x256xbf16> {jax.result_info = "result[0]['layers']['fc2_w']"}, tensor<2x256xbf16> {jax.result_info = "result[0]['layers']['ln1_b']"}, tensor<2x256xbf16> {jax.result_info = "result[0]['layers']['ln1_g']"}, tensor<2x256xbf16> {jax.result_info = "result[0]['layers']['ln2_b']"}, tensor<2x256xbf16> {jax.result_info = "result[0]['layers']['ln2_g']"}, tensor<2x256xbf16> {jax.result_info = "result[0]['layers']['proj_b']"}, tensor<2x256x256xbf16> {jax.result_info = "result[0]['layers']['proj_w']"}, tensor<2x768xbf16> {jax.result_info = "result[0]['layers']['qkv_b']"}, tensor<2x256x768xbf16> {jax.result_info = "result[0]['layers']['qkv_w']"}, tensor<512x256xbf16> {jax.result_info = "result[0]['wte']"}, tensor<i32> {jax.result_info = "result[1][0].count"}, tensor<2x1024xbf16> {jax.result_info = "result[1][0].mu['layers']['fc1_b']"}, tensor<2x256x1024xbf16> {jax.result_info = "result[1][0].mu['layers']['fc1_w']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].mu['layers']['fc2_b']"}, tensor<2x1024x256xbf16> {jax.result_info = "result[1][0].mu['layers']['fc2_w']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].mu['layers']['ln1_b']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].mu['layers']['ln1_g']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].mu['layers']['ln2_b']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].mu['layers']['ln2_g']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].mu['layers']['proj_b']"}, tensor<2x256x256xbf16> {jax.result_info = "result[1][0].mu['layers']['proj_w']"}, tensor<2x768xbf16> {jax.result_info = "result[1][0].mu['layers']['qkv_b']"}, tensor<2x256x768xbf16> {jax.result_info = "result[1][0].mu['layers']['qkv_w']"}, tensor<512x256xbf16> {jax.result_info = "result[1][0].mu['wte']"}, tensor<2x1024xbf16> {jax.result_info = "result[1][0].nu['layers']['fc1_b']"}, tensor<2x256x1024xbf16> {jax.result_info = "result[1][0].nu['layers']['fc1_w']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].nu['layers']['fc2_b']"}, tensor<2x1024x256xbf16> {jax.result_info = "result[1][0].nu['layers']['fc2_w']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].nu['layers']['ln1_b']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].nu['layers']['ln1_g']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].nu['layers']['ln2_b']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].nu['layers']['ln2_g']"}, tensor<2x256xbf16> {jax.result_info = "result[1][0].nu['layers']['proj_b']"}, tensor<2x256x256xbf16> {jax.result_info = "result[1][0].nu['layers']['proj_w']"}, tensor<2x768xbf16> {jax.result_info = "result[1][0].nu['layers']['qkv_b']"}, tensor<2x256x768xbf16> {jax.result_info = "result[1][0].nu['layers']['qkv_w']"}, tensor<512x256xbf16> {jax.result_info = "result[1][0].nu['wte']"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x256xi32>
    %1 = stablehlo.compare LT, %arg40, %0, SIGNED : (tensor<4x256xi32>, tensor<4x256xi32>) -> tensor<4x256xi1>
    %c_0 = stablehlo.constant dense<512> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4x256xi32>
    %3 = stablehlo.add %arg40, %2 : tensor<4x256xi32>
    %4 = stablehlo.select %1, %3, %arg40 : tensor<4x256xi1>, tensor<4x256xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<4x256xi32>) -> tensor<4x256x1xi32>
    %6 = "stablehlo.gather"(%arg12, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 256>}> : (tensor<512x256xbf16>, tensor<4x256x1xi32>) -> tensor<4x256x256xbf16>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<0xbf16>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<bf16>) -> tensor<2x4x256x256xbf16>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %9 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<bf16>) -> tensor<2x4x256x1xbf16>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %10 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<bf16>) -> tensor<2x4x256x1xbf16>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %11 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<bf16>) -> tensor<2x4x256x256xbf16>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %12 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<bf16>) -> tensor<2x1x1x256xbf16>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %13 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<bf16>) -> tensor<2x4x256x256xbf16>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %14 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<bf16>) -> tensor<2x4x256x256xbf16>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %15 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<bf16>) -> tensor<2x4x256x4x64xbf16>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %16 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<bf16>) -> tensor<2x4x256x4x64xbf16>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %17 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<bf16>) -> tensor<2x4x256x4x64xbf16>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x4x4x256xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %19 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<bf16>) -> tensor<2x4x256x4x64xbf16>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %20 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<bf16>) -> tensor<2x4x256x256xbf16>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %21 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<bf16>) -> tensor<2x4x256x256xbf16>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %22 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<bf16>) -> tensor<2x4x256x1xbf16>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %23 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<bf16>) -> tensor<2x4x256x1xbf16>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %24 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<bf16>) -> tensor<2x4x256x256xbf16>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %25 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<bf16>) -> tensor<2x1x1x256xbf16>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %26 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<bf16>) -> tensor<2x4x256x256xbf16>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %27 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<bf16>) -> tensor<2x4x256x256xbf16>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %28 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<bf16>) -> tensor<2x4x256x1024xbf16>
    %cst_22 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %29 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<bf16>) -> tensor<2x4x256x1024xbf16>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %30 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<bf16>) -> tensor<2x4x256x1024xbf16>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %31 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<bf16>) -> tensor<2x4x256x1024xbf16>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %32 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<bf16>) -> tensor<2x4x256x1024xbf16>
    %c_26 = stablehlo.constant dense<0> : tensor<i32>
    %33:40 = stablehlo.while(%iterArg = %arg0, %iterArg_156 = %arg1, %iterArg_157 = %arg2, %iterArg_158 = %arg3, %iterArg_159 = %arg4, %iterArg_160 = %arg5, %iterArg_161 = %arg6, %iterArg_162 = %arg7, %iterArg_163 = %arg8, %iterArg_164 = %arg9, %iterArg_165 = %arg10, %iterArg_166 = %arg11, %iterArg_167 = %7, %iterArg_168 = %c_26, %iterArg_169 = %6, %iterArg_170 = %8, %iterArg_171 = %9, %iterArg_172 = %10, %iterArg_173 = %11, %iterArg_174 = %12, %iterArg_175 = %13, %iterArg_176 = %14, %iterArg_177 = %15, %iterArg_178 = %16, %iterArg_179 = %17, %iterArg_180 = %18, %iterArg_181 = %19, %iterArg_182 = %20, %iterArg_183 = %21, %iterArg_184 = %22, %iterArg_185 = %23, %iterArg_186 = %24, %iterArg_187 = %25, %iterArg_188 = %26, %iterArg_189 = %27, %iterArg_190 = %28, %iterArg_191 = %29, %iterArg_192 = %30, %iterArg_193 = %31, %iterArg_194 = %32) : tensor<2x1024xbf16>, tensor<2x256x1024xbf16>, tensor<2x256xbf16>, tensor<2x1024x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256x256xbf16>, tensor<2x768xbf16>, tensor<2x256x768xbf16>, tensor<0xbf16>, tensor<i32>, tensor<4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x256xbf16>, tensor<2x1x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x4x256xf32>, tensor<2x4x256x4x64xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x256xbf16>, tensor<2x1x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>
    cond {
      %c_195 = stablehlo.constant dense<2> : tensor<i32>
      %455 = stablehlo.compare LT, %iterArg_168, %c_195, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %455 : tensor<i1>
    } do {
      %455 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_168) : (tensor<2x1024xbf16>, tensor<i32>) -> tensor<1024xbf16>
      %456 = func.call @dynamic_index_in_dim_0(%iterArg_156, %iterArg_168) : (tensor<2x256x1024xbf16>, tensor<i32>) -> tensor<256x1024xbf16>
      %457 = func.call @dynamic_index_in_dim_1(%iterArg_157, %iterArg_168) : (tensor<2x256xbf16>, tensor<i32>) -> tensor<256xbf16>
      %458 = func.call @dynamic_index_in_dim_2(%iterArg_158, %iterArg_168) : (tensor<2x1024x256xbf16>, tensor<i32>) -> tensor<1024x256xbf16>
      %459 = func.call @dynamic_index_in_dim_1(%iterArg_159, %iterArg_168) : (tensor<2x256xbf16>, tensor<i32>) -> tensor<256xbf16>
      %460 = func.call @dynamic_index_in_dim_1(%iterArg_160, %iterArg_168) : (tensor<2x256xbf16>, tensor<i32>) -> tensor<256xbf16>
      %461 = func.call @dynamic_index_in_dim_1(%iterArg_161, %iterArg_168) : (tensor<2x256xbf16>, tensor<i32>) -> tensor<256xbf16>
      %462 = func.call @dynamic_index_in_dim_1(%iterArg_162, %iterArg_168) : (tensor<2x256xbf16>, tensor<i32>) -> tensor<256xbf16>
      %463 = func.call @dynamic_index_in_dim_1(%iterArg_163, %iterArg_168) : (tensor<2x256xbf16>, tensor<i32>) -> tensor<256xbf16>
      %464 = func.call @dynamic_index_in_dim_3(%iterArg_164, %iterArg_168) : (tensor<2x256x256xbf16>, tensor<i32>) -> tensor<256x256xbf16>
      %465 = func.call @dynamic_index_in_dim_4(%iterArg_165, %iterArg_168) : (tensor<2x768xbf16>, tensor<i32>) -> tensor<768xbf16>
      %466 = func.call @dynamic_index_in_dim_5(%iterArg_166, %iterArg_168) : (tensor<2x256x768xbf16>, tensor<i32>) -> tensor<256x768xbf16>
      %467 = stablehlo.convert %iterArg_169 : (tensor<4x256x256xbf16>) -> tensor<4x256x256xf32>
      %cst_195 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %468 = stablehlo.reduce(%467 init: %cst_195) applies stablehlo.add across dimensions = [2] : (tensor<4x256x256xf32>, tensor<f32>) -> tensor<4x256xf32>
      %469 = stablehlo.broadcast_in_dim %468, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x1xf32>
      %cst_196 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
      %470 = stablehlo.broadcast_in_dim %cst_196, dims = [] : (tensor<f32>) -> tensor<4x256x1xf32>
      %471 = stablehlo.divide %469, %470 : tensor<4x256x1xf32>
      %472 = stablehlo.convert %471 : (tensor<4x256x1xf32>) -> tensor<4x256x1xbf16>
      %473 = stablehlo.broadcast_in_dim %472, dims = [0, 1, 2] : (tensor<4x256x1xbf16>) -> tensor<4x256x256xbf16>
      %474 = stablehlo.subtract %iterArg_169, %473 : tensor<4x256x256xbf16>
      %475 = stablehlo.multiply %474, %474 : tensor<4x256x256xbf16>
      %cst_197 = stablehlo.constant dense<2.000000e+00> : tensor<bf16>
      %476 = stablehlo.broadcast_in_dim %cst_197, dims = [] : (tensor<bf16>) -> tensor<4x256x256xbf16>
      %477 = stablehlo.multiply %476, %474 : tensor<4x256x256xbf16>
      %478 = stablehlo.convert %475 : (tensor<4x256x256xbf16>) -> tensor<4x256x256xf32>
      %cst_198 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %479 = stablehlo.reduce(%478 init: %cst_198) applies stablehlo.add across dimensions = [2] : (tensor<4x256x256xf32>, tensor<f32>) -> tensor<4x256xf32>
      %480 = stablehlo.broadcast_in_dim %479, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x1xf32>
      %cst_199 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
      %481 = stablehlo.broadcast_in_dim %cst_199, dims = [] : (tensor<f32>) -> tensor<4x256x1xf32>
      %482 = stablehlo.divide %480, %481 : tensor<4x256x1xf32>
      %483 = stablehlo.convert %482 : (tensor<4x256x1xf32>) -> tensor<4x256x1xbf16>
      %484 = stablehlo.broadcast_in_dim %472, dims = [0, 1, 2] : (tensor<4x256x1xbf16>) -> tensor<4x256x256xbf16>
      %485 = stablehlo.subtract %iterArg_169, %484 : tensor<4x256x256xbf16>
      %cst_200 = stablehlo.constant dense<1.001360e-05> : tensor<bf16>
      %486 = stablehlo.broadcast_in_dim %cst_200, dims = [] : (tensor<bf16>) -> tensor<4x256x1xbf16>
      %487 = stablehlo.add %483, %486 : tensor<4x256x1xbf16>
      %488 = stablehlo.rsqrt %487 : tensor<4x256x1xbf16>
      %489 = stablehlo.divide %488, %487 : tensor<4x256x1xbf16>
      %cst_201 = stablehlo.constant dense<-5.000000e-01> : tensor<bf16>
      %490 = stablehlo.broadcast_in_dim %cst_201, dims = [] : (tensor<bf16>) -> tensor<4x256x1xbf16>
      %491 = stablehlo.multiply %490, %489 : tensor<4x256x1xbf16>
      %492 = stablehlo.broadcast_in_dim %488, dims = [0, 1, 2] : (tensor<4x256x1xbf16>) -> tensor<4x256x256xbf16>
      %493 = stablehlo.multiply %485, %492 : tensor<4x256x256xbf16>
      %494 = stablehlo.broadcast_in_dim %460, dims = [2] : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %495 = stablehlo.broadcast_in_dim %494, dims = [0, 1, 2] : (tensor<1x1x256xbf16>) -> tensor<4x256x256xbf16>
      %496 = stablehlo.multiply %493, %495 : tensor<4x256x256xbf16>
      %497 = stablehlo.broadcast_in_dim %459, dims = [2] : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %498 = stablehlo.broadcast_in_dim %497, dims = [0, 1, 2] : (tensor<1x1x256xbf16>) -> tensor<4x256x256xbf16>
      %499 = stablehlo.add %496, %498 : tensor<4x256x256xbf16>
      %500 = stablehlo.dot_general %499, %466, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x256x256xbf16>, tensor<256x768xbf16>) -> tensor<4x256x768xbf16>
      %501 = stablehlo.broadcast_in_dim %465, dims = [2] : (tensor<768xbf16>) -> tensor<1x1x768xbf16>
      %502 = stablehlo.broadcast_in_dim %501, dims = [0, 1, 2] : (tensor<1x1x768xbf16>) -> tensor<4x256x768xbf16>
      %503 = stablehlo.add %500, %502 : tensor<4x256x768xbf16>
      %504 = stablehlo.slice %503 [0:4, 0:256, 0:256] : (tensor<4x256x768xbf16>) -> tensor<4x256x256xbf16>
      %505 = stablehlo.slice %503 [0:4, 0:256, 256:512] : (tensor<4x256x768xbf16>) -> tensor<4x256x256xbf16>
      %506 = stablehlo.slice %503 [0:4, 0:256, 512:768] : (tensor<4x256x768xbf16>) -> tensor<4x256x256xbf16>
      %507 = stablehlo.reshape %504 : (tensor<4x256x256xbf16>) -> tensor<4x256x4x64xbf16>
      %508 = stablehlo.reshape %505 : (tensor<4x256x256xbf16>) -> tensor<4x256x4x64xbf16>
      %509 = stablehlo.reshape %506 : (tensor<4x256x256xbf16>) -> tensor<4x256x4x64xbf16>
      %510:3 = stablehlo.custom_call @__cudnn$fmhaSoftmax(%507, %508, %509) {api_version = 2 : i32, backend_config = "{\22operation_queue_id\22: \220\22, \22cudnn_fmha_backend_config\22: {\22algorithm\22: {\22algo_id\22: \220\22, \22math_type\22: \22TENSOR_OP_MATH\22, \22tuning_knobs\22: {\2217\22: \221\22, \2224\22: \220\22}, \22is_cudnn_frontend\22: true, \22workspace_size\22: \220\22}, \22fmha_scale\22: 0.125, \22intermediate_tensor_shape\22: {\22element_type\22: \22BF16\22, \22dimensions\22: [\224\22, \224\22, \22256\22, \22256\22], \22tuple_shapes\22: [], \22layout\22: {\22dim_level_types\22: [], \22dim_unique\22: [], \22dim_ordered\22: [], \22minor_to_major\22: [\223\22, \222\22, \221\22, \220\22], \22tiles\22: [], \22element_size_in_bits\22: \220\22, \22memory_space\22: \220\22, \22index_primitive_type\22: \22PRIMITIVE_TYPE_INVALID\22, \22pointer_primitive_type\22: \22PRIMITIVE_TYPE_INVALID\22, \22dynamic_shape_metadata_prefix_bytes\22: \220\22}, \22is_dynamic_dimension\22: [false, false, false, false]}, \22is_flash_attention\22: true, \22mask_type\22: \22CAUSAL\22, \22bmm1_dot_dimension_numbers\22: {\22lhs_contracting_dimensions\22: [\223\22], \22rhs_contracting_dimensions\22: [\223\22], \22lhs_batch_dimensions\22: [\220\22, \222\22], \22rhs_batch_dimensions\22: [\220\22, \222\22]}, \22bmm2_dot_dimension_numbers\22: {\22lhs_contracting_dimensions\22: [\223\22], \22rhs_contracting_dimensions\22: [\221\22], \22lhs_batch_dimensions\22: [\220\22, \221\22], \22rhs_batch_dimensions\22: [\220\22, \222\22]}, \22dropout_rate\22: 0.0, \22seed\22: 42, \22sliding_window_length\22: 0, \22max_seg_per_batch\22: 1, \22is_paged_attention\22: false}}", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>, dense<[3, 2, 1, 0]> : tensor<4xindex>, dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 1, 2, 0]> : tensor<4xindex>, dense<[2, 1, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (tensor<4x256x4x64xbf16>, tensor<4x256x4x64xbf16>, tensor<4x256x4x64xbf16>) -> (tensor<4x4x256x64xbf16>, tensor<4x4x256xf32>, tensor<0xui8>)
      %511 = stablehlo.transpose %510#0, dims = [0, 2, 1, 3] : (tensor<4x4x256x64xbf16>) -> tensor<4x256x4x64xbf16>
      %512 = stablehlo.reshape %511 : (tensor<4x256x4x64xbf16>) -> tensor<4x256x256xbf16>
      %513 = stablehlo.dot_general %512, %464, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x256x256xbf16>, tensor<256x256xbf16>) -> tensor<4x256x256xbf16>
      %514 = stablehlo.broadcast_in_dim %463, dims = [2] : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %515 = stablehlo.broadcast_in_dim %514, dims = [0, 1, 2] : (tensor<1x1x256xbf16>) -> tensor<4x256x256xbf16>
      %516 = stablehlo.add %513, %515 : tensor<4x256x256xbf16>
      %517 = stablehlo.add %iterArg_169, %516 : tensor<4x256x256xbf16>
      %518 = stablehlo.convert %517 : (tensor<4x256x256xbf16>) -> tensor<4x256x256xf32>
      %cst_202 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %519 = stablehlo.reduce(%518 init: %cst_202) applies stablehlo.add across dimensions = [2] : (tensor<4x256x256xf32>, tensor<f32>) -> tensor<4x256xf32>
      %520 = stablehlo.broadcast_in_dim %519, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x1xf32>
      %cst_203 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
      %521 = stablehlo.broadcast_in_dim %cst_203, dims = [] : (tensor<f32>) -> tensor<4x256x1xf32>
      %522 = stablehlo.divide %520, %521 : tensor<4x256x1xf32>
      %523 = stablehlo.convert %522 : (tensor<4x256x1xf32>) -> tensor<4x256x1xbf16>
      %524 = stablehlo.broadcast_in_dim %523, dims = [0, 1, 2] : (tensor<4x256x1xbf16>) -> tensor<4x256x256xbf16>
      %525 = stablehlo.subtract %517, %524 : tensor<4x256x256xbf16>
      %526 = stablehlo.multiply %525, %525 : tensor<4x256x256xbf16>
      %cst_204 = stablehlo.constant dense<2.000000e+00> : tensor<bf16>
      %527 = stablehlo.broadcast_in_dim %cst_204, dims = [] : (tensor<bf16>) -> tensor<4x256x256xbf16>
      %528 = stablehlo.multiply %527, %525 : tensor<4x256x256xbf16>
      %529 = stablehlo.convert %526 : (tensor<4x256x256xbf16>) -> tensor<4x256x256xf32>
      %cst_205 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %530 = stablehlo.reduce(%529 init: %cst_205) applies stablehlo.add across dimensions = [2] : (tensor<4x256x256xf32>, tensor<f32>) -> tensor<4x256xf32>
      %531 = stablehlo.broadcast_in_dim %530, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x1xf32>
      %cst_206 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
      %532 = stablehlo.broadcast_in_dim %cst_206, dims = [] : (tensor<f32>) -> tensor<4x256x1xf32>
      %533 = stablehlo.divide %531, %532 : tensor<4x256x1xf32>
      %534 = stablehlo.convert %533 : (tensor<4x256x1xf32>) -> tensor<4x256x1xbf16>
      %535 = stablehlo.broadcast_in_dim %523, dims = [0, 1, 2] : (tensor<4x256x1xbf16>) -> tensor<4x256x256xbf16>
      %536 = stablehlo.subtract %517, %535 : tensor<4x256x256xbf16>
      %cst_207 = stablehlo.constant dense<1.001360e-05> : tensor<bf16>
      %537 = stablehlo.broadcast_in_dim %cst_207, dims = [] : (tensor<bf16>) -> tensor<4x256x1xbf16>
      %538 = stablehlo.add %534, %537 : tensor<4x256x1xbf16>
      %539 = stablehlo.rsqrt %538 : tensor<4x256x1xbf16>
      %540 = stablehlo.divide %539, %538 : tensor<4x256x1xbf16>
      %cst_208 = stablehlo.constant dense<-5.000000e-01> : tensor<bf16>
      %541 = stablehlo.broadcast_in_dim %cst_208, dims = [] : (tensor<bf16>) -> tensor<4x256x1xbf16>
      %542 = stablehlo.multiply %541, %540 : tensor<4x256x1xbf16>
      %543 = stablehlo.broadcast_in_dim %539, dims = [0, 1, 2] : (tensor<4x256x1xbf16>) -> tensor<4x256x256xbf16>
      %544 = stablehlo.multiply %536, %543 : tensor<4x256x256xbf16>
      %545 = stablehlo.broadcast_in_dim %462, dims = [2] : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %546 = stablehlo.broadcast_in_dim %545, dims = [0, 1, 2] : (tensor<1x1x256xbf16>) -> tensor<4x256x256xbf16>
      %547 = stablehlo.multiply %544, %546 : tensor<4x256x256xbf16>
      %548 = stablehlo.broadcast_in_dim %461, dims = [2] : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %549 = stablehlo.broadcast_in_dim %548, dims = [0, 1, 2] : (tensor<1x1x256xbf16>) -> tensor<4x256x256xbf16>
      %550 = stablehlo.add %547, %549 : tensor<4x256x256xbf16>
      %551 = stablehlo.dot_general %550, %456, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x256x256xbf16>, tensor<256x1024xbf16>) -> tensor<4x256x1024xbf16>
      %552 = stablehlo.broadcast_in_dim %455, dims = [2] : (tensor<1024xbf16>) -> tensor<1x1x1024xbf16>
      %553 = stablehlo.broadcast_in_dim %552, dims = [0, 1, 2] : (tensor<1x1x1024xbf16>) -> tensor<4x256x1024xbf16>
      %554 = stablehlo.add %551, %553 : tensor<4x256x1024xbf16>
      %555 = stablehlo.multiply %554, %554 : tensor<4x256x1024xbf16>
      %556 = stablehlo.multiply %555, %554 : tensor<4x256x1024xbf16>
      %557 = stablehlo.multiply %554, %554 : tensor<4x256x1024xbf16>
      %cst_209 = stablehlo.constant dense<3.000000e+00> : tensor<bf16>
      %558 = stablehlo.broadcast_in_dim %cst_209, dims = [] : (tensor<bf16>) -> tensor<4x256x1024xbf16>
      %559 = stablehlo.multiply %558, %557 : tensor<4x256x1024xbf16>
      %cst_210 = stablehlo.constant dense<4.467770e-02> : tensor<bf16>
      %560 = stablehlo.broadcast_in_dim %cst_210, dims = [] : (tensor<bf16>) -> tensor<4x256x1024xbf16>
      %561 = stablehlo.multiply %560, %556 : tensor<4x256x1024xbf16>
      %562 = stablehlo.add %554, %561 : tensor<4x256x1024xbf16>
      %cst_211 = stablehlo.constant dense<7.968750e-01> : tensor<bf16>
      %563 = stablehlo.broadcast_in_dim %cst_211, dims = [] : (tensor<bf16>) -> tensor<4x256x1024xbf16>
      %564 = stablehlo.multiply %563, %562 : tensor<4x256x1024xbf16>
      %565 = stablehlo.tanh %564 : tensor<4x256x1024xbf16>
      %cst_212 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
      %566 = stablehlo.broadcast_in_dim %cst_212, dims = [] : (tensor<bf16>) -> tensor<4x256x1024xbf16>
      %567 = stablehlo.add %566, %565 : tensor<4x256x1024xbf16>
      %cst_213 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
      %568 = stablehlo.broadcast_in_dim %cst_213, dims = [] : (tensor<bf16>) -> tensor<4x256x1024xbf16>
      %569 = stablehlo.subtract %568, %565 : tensor<4x256x1024xbf16>
      %570 = stablehlo.multiply %567, %569 : tensor<4x256x1024xbf16>
      %cst_214 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
      %571 = stablehlo.broadcast_in_dim %cst_214, dims = [] : (tensor<bf16>) -> tensor<4x256x1024xbf16>
      %572 = stablehlo.add %571, %565 : tensor<4x256x1024xbf16>
      %cst_215 = stablehlo.constant dense<5.000000e-01> : tensor<bf16>
      %573 = stablehlo.broadcast_in_dim %cst_215, dims = [] : (tensor<bf16>) -> tensor<4x256x1024xbf16>
      %574 = stablehlo.multiply %573, %572 : tensor<4x256x1024xbf16>
      %575 = stablehlo.multiply %554, %574 : tensor<4x256x1024xbf16>
      %576 = stablehlo.dot_general %575, %458, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x256x1024xbf16>, tensor<1024x256xbf16>) -> tensor<4x256x256xbf16>
      %577 = stablehlo.broadcast_in_dim %457, dims = [2] : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %578 = stablehlo.broadcast_in_dim %577, dims = [0, 1, 2] : (tensor<1x1x256xbf16>) -> tensor<4x256x256xbf16>
      %579 = stablehlo.add %576, %578 : tensor<4x256x256xbf16>
      %580 = stablehlo.add %517, %579 : tensor<4x256x256xbf16>
      %581 = func.call @dynamic_update_index_in_dim(%iterArg_170, %477, %iterArg_168) : (tensor<2x4x256x256xbf16>, tensor<4x256x256xbf16>, tensor<i32>) -> tensor<2x4x256x256xbf16>
      %582 = func.call @dynamic_update_index_in_dim_6(%iterArg_171, %491, %iterArg_168) : (tensor<2x4x256x1xbf16>, tensor<4x256x1xbf16>, tensor<i32>) -> tensor<2x4x256x1xbf16>
      %583 = func.call @dynamic_update_index_in_dim_6(%iterArg_172, %488, %iterArg_168) : (tensor<2x4x256x1xbf16>, tensor<4x256x1xbf16>, tensor<i32>) -> tensor<2x4x256x1xbf16>
      %584 = func.call @dynamic_update_index_in_dim(%iterArg_173, %485, %iterArg_168) : (tensor<2x4x256x256xbf16>, tensor<4x256x256xbf16>, tensor<i32>) -> tensor<2x4x256x256xbf16>
      %585 = func.call @dynamic_update_index_in_dim_7(%iterArg_174, %494, %iterArg_168) : (tensor<2x1x1x256xbf16>, tensor<1x1x256xbf16>, tensor<i32>) -> tensor<2x1x1x256xbf16>
      %586 = func.call @dynamic_update_index_in_dim(%iterArg_175, %493, %iterArg_168) : (tensor<2x4x256x256xbf16>, tensor<4x256x256xbf16>, tensor<i32>) -> tensor<2x4x256x256xbf16>
      %587 = func.call @dynamic_update_index_in_dim(%iterArg_176, %499, %iterArg_168) : (tensor<2x4x256x256xbf16>, tensor<4x256x256xbf16>, tensor<i32>) -> tensor<2x4x256x256xbf16>
      %588 = func.call @dynamic_update_index_in_dim_8(%iterArg_177, %507, %iterArg_168) : (tensor<2x4x256x4x64xbf16>, tensor<4x256x4x64xbf16>, tensor<i32>) -> tensor<2x4x256x4x64xbf16>
      %589 = func.call @dynamic_update_index_in_dim_8(%iterArg_178, %508, %iterArg_168) : (tensor<2x4x256x4x64xbf16>, tensor<4x256x4x64xbf16>, tensor<i32>) -> tensor<2x4x256x4x64xbf16>
      %590 = func.call @dynamic_update_index_in_dim_8(%iterArg_179, %509, %iterArg_168) : (tensor<2x4x256x4x64xbf16>, tensor<4x256x4x64xbf16>, tensor<i32>) -> tensor<2x4x256x4x64xbf16>
      %591 = func.call @dynamic_update_index_in_dim_9(%iterArg_180, %510#1, %iterArg_168) : (tensor<2x4x4x256xf32>, tensor<4x4x256xf32>, tensor<i32>) -> tensor<2x4x4x256xf32>
      %592 = func.call @dynamic_update_index_in_dim_8(%iterArg_181, %511, %iterArg_168) : (tensor<2x4x256x4x64xbf16>, tensor<4x256x4x64xbf16>, tensor<i32>) -> tensor<2x4x256x4x64xbf16>
      %593 = func.call @dynamic_update_index_in_dim(%iterArg_182, %512, %iterArg_168) : (tensor<2x4x256x256xbf16>, tensor<4x256x256xbf16>, tensor<i32>) -> tensor<2x4x256x256xbf16>
      %594 = func.call @dynamic_update_index_in_dim(%iterArg_183, %528, %iterArg_168) : (tensor<2x4x256x256xbf16>, tensor<4x256x256xbf16>, tensor<i32>) -> tensor<2x4x256x256xbf16>
      %595 = func.call @dynamic_update_index_in_dim_6(%iterArg_184, %542, %iterArg_168) : (tensor<2x4x256x1xbf16>, tensor<4x256x1xbf16>, tensor<i32>) -> tensor<2x4x256x1xbf16>
      %596 = func.call @dynamic_update_index_in_dim_6(%iterArg_185, %539, %iterArg_168) : (tensor<2x4x256x1xbf16>, tensor<4x256x1xbf16>, tensor<i32>) -> tensor<2x4x256x1xbf16>
      %597 = func.call @dynamic_update_index_in_dim(%iterArg_186, %536, %iterArg_168) : (tensor<2x4x256x256xbf16>, tensor<4x256x256xbf16>, tensor<i32>) -> tensor<2x4x256x256xbf16>
      %598 = func.call @dynamic_update_index_in_dim_7(%iterArg_187, %545, %iterArg_168) : (tensor<2x1x1x256xbf16>, tensor<1x1x256xbf16>, tensor<i32>) -> tensor<2x1x1x256xbf16>
      %599 = func.call @dynamic_update_index_in_dim(%iterArg_188, %544, %iterArg_168) : (tensor<2x4x256x256xbf16>, tensor<4x256x256xbf16>, tensor<i32>) -> tensor<2x4x256x256xbf16>
      %600 = func.call @dynamic_update_index_in_dim(%iterArg_189, %550, %iterArg_168) : (tensor<2x4x256x256xbf16>, tensor<4x256x256xbf16>, tensor<i32>) -> tensor<2x4x256x256xbf16>
      %601 = func.call @dynamic_update_index_in_dim_10(%iterArg_190, %559, %iterArg_168) : (tensor<2x4x256x1024xbf16>, tensor<4x256x1024xbf16>, tensor<i32>) -> tensor<2x4x256x1024xbf16>
      %602 = func.call @dynamic_update_index_in_dim_10(%iterArg_191, %570, %iterArg_168) : (tensor<2x4x256x1024xbf16>, tensor<4x256x1024xbf16>, tensor<i32>) -> tensor<2x4x256x1024xbf16>
      %603 = func.call @dynamic_update_index_in_dim_10(%iterArg_192, %574, %iterArg_168) : (tensor<2x4x256x1024xbf16>, tensor<4x256x1024xbf16>, tensor<i32>) -> tensor<2x4x256x1024xbf16>
      %604 = func.call @dynamic_update_index_in_dim_10(%iterArg_193, %554, %iterArg_168) : (tensor<2x4x256x1024xbf16>, tensor<4x256x1024xbf16>, tensor<i32>) -> tensor<2x4x256x1024xbf16>
      %605 = func.call @dynamic_update_index_in_dim_10(%iterArg_194, %575, %iterArg_168) : (tensor<2x4x256x1024xbf16>, tensor<4x256x1024xbf16>, tensor<i32>) -> tensor<2x4x256x1024xbf16>
      %c_216 = stablehlo.constant dense<1> : tensor<i32>
      %606 = stablehlo.add %iterArg_168, %c_216 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_156, %iterArg_157, %iterArg_158, %iterArg_159, %iterArg_160, %iterArg_161, %iterArg_162, %iterArg_163, %iterArg_164, %iterArg_165, %iterArg_166, %iterArg_167, %606, %580, %581, %582, %583, %584, %585, %586, %587, %588, %589, %590, %591, %592, %593, %594, %595, %596, %597, %598, %599, %600, %601, %602, %603, %604, %605 : tensor<2x1024xbf16>, tensor<2x256x1024xbf16>, tensor<2x256xbf16>, tensor<2x1024x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256x256xbf16>, tensor<2x768xbf16>, tensor<2x256x768xbf16>, tensor<0xbf16>, tensor<i32>, tensor<4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x256xbf16>, tensor<2x1x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x4x256xf32>, tensor<2x4x256x4x64xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x256xbf16>, tensor<2x1x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>
    }
    %34 = stablehlo.transpose %arg12, dims = [1, 0] : (tensor<512x256xbf16>) -> tensor<256x512xbf16>
    %35 = stablehlo.dot_general %33#14, %34, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x256x256xbf16>, tensor<256x512xbf16>) -> tensor<4x256x512xbf16>
    %36 = stablehlo.convert %35 : (tensor<4x256x512xbf16>) -> tensor<4x256x512xf32>
    %37:3 = call @log_softmax(%36) : (tensor<4x256x512xf32>) -> (tensor<4x256x512xf32>, tensor<4x256x512xf32>, tensor<4x256x1xf32>)
    %38 = stablehlo.broadcast_in_dim %arg41, dims = [0, 1] : (tensor<4x256xi32>) -> tensor<4x256x1xi32>
    %39:2 = call @take_along_axis(%37#0, %38) : (tensor<4x256x512xf32>, tensor<4x256x1xi32>) -> (tensor<4x256x1xf32>, tensor<4x256x1x1xi32>)
    %cst_27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %40 = stablehlo.reduce(%39#0 init: %cst_27) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<4x256x1xf32>, tensor<f32>) -> tensor<f32>
    %cst_28 = stablehlo.constant dense<1.024000e+03> : tensor<f32>
    %41 = stablehlo.divide %40, %cst_28 : tensor<f32>
    %42 = stablehlo.negate %41 : tensor<f32>
    %cst_29 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %43 = stablehlo.negate %cst_29 : tensor<f32>
    %cst_30 = stablehlo.constant dense<1.024000e+03> : tensor<f32>
    %44 = stablehlo.divide %43, %cst_30 : tensor<f32>
    %45 = stablehlo.broadcast_in_dim %44, dims = [] : (tensor<f32>) -> tensor<4x256x1xf32>
    %46 = call @take_along_axis_11(%39#1, %45) : (tensor<4x256x1x1xi32>, tensor<4x256x1xf32>) -> tensor<4x256x512xf32>
    %47 = call @log_softmax_12(%37#1, %37#2, %46) : (tensor<4x256x512xf32>, tensor<4x256x1xf32>, tensor<4x256x512xf32>) -> tensor<4x256x512xf32>
    %48 = stablehlo.convert %47 : (tensor<4x256x512xf32>) -> tensor<4x256x512xbf16>
    %49 = stablehlo.dot_general %48, %33#14, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<4x256x512xbf16>, tensor<4x256x256xbf16>) -> tensor<512x256xbf16>
    %50 = stablehlo.transpose %49, dims = [1, 0] : (tensor<512x256xbf16>) -> tensor<256x512xbf16>
    %51 = stablehlo.dot_general %48, %34, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x256x512xbf16>, tensor<256x512xbf16>) -> tensor<4x256x256xbf16>
    %52 = stablehlo.transpose %50, dims = [1, 0] : (tensor<256x512xbf16>) -> tensor<512x256xbf16>
    %cst_31 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %53 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %54 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %cst_33 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %55 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %cst_34 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %56 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %cst_35 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %57 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %cst_36 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %58 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %cst_37 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %59 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %60 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %cst_39 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %61 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %cst_40 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %62 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %cst_41 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %63 = stablehlo.broadcast_in_dim %cst_41, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %cst_42 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %64 = stablehlo.broadcast_in_dim %cst_42, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %c_43 = stablehlo.constant dense<0> : tensor<i32>
    %65:44 = stablehlo.while(%iterArg = %33#15, %iterArg_156 = %33#16, %iterArg_157 = %33#17, %iterArg_158 = %33#18, %iterArg_159 = %33#19, %iterArg_160 = %33#20, %iterArg_161 = %arg11, %iterArg_162 = %33#21, %iterArg_163 = %33#22, %iterArg_164 = %33#23, %iterArg_165 = %33#24, %iterArg_166 = %33#25, %iterArg_167 = %33#26, %iterArg_168 = %arg9, %iterArg_169 = %33#27, %iterArg_170 = %33#28, %iterArg_171 = %33#29, %iterArg_172 = %33#30, %iterArg_173 = %33#31, %iterArg_174 = %33#32, %iterArg_175 = %33#33, %iterArg_176 = %arg1, %iterArg_177 = %33#34, %iterArg_178 = %33#35, %iterArg_179 = %33#36, %iterArg_180 = %33#37, %iterArg_181 = %33#38, %iterArg_182 = %arg3, %iterArg_183 = %33#39, %iterArg_184 = %7, %iterArg_185 = %c_43, %iterArg_186 = %51, %iterArg_187 = %53, %iterArg_188 = %54, %iterArg_189 = %55, %iterArg_190 = %56, %iterArg_191 = %57, %iterArg_192 = %58, %iterArg_193 = %59, %iterArg_194 = %60, %iterArg_195 = %61, %iterArg_196 = %62, %iterArg_197 = %63, %iterArg_198 = %64) : tensor<2x4x256x256xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x256xbf16>, tensor<2x1x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x256x768xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x4x256xf32>, tensor<2x4x256x4x64xbf16>, tensor<2x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x256xbf16>, tensor<2x1x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x256x1024xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x1024x256xbf16>, tensor<2x4x256x1024xbf16>, tensor<0xbf16>, tensor<i32>, tensor<4x256x256xbf16>, tensor<2x1024xbf16>, tensor<2x256x1024xbf16>, tensor<2x256xbf16>, tensor<2x1024x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256x256xbf16>, tensor<2x768xbf16>, tensor<2x256x768xbf16>
    cond {
      %c_199 = stablehlo.constant dense<2> : tensor<i32>
      %455 = stablehlo.compare LT, %iterArg_185, %c_199, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %455 : tensor<i1>
    } do {
      %c_199 = stablehlo.constant dense<2> : tensor<i32>
      %455 = stablehlo.subtract %c_199, %iterArg_185 : tensor<i32>
      %c_200 = stablehlo.constant dense<1> : tensor<i32>
      %456 = stablehlo.subtract %455, %c_200 : tensor<i32>
      %457 = func.call @dynamic_index_in_dim_13(%iterArg, %456) : (tensor<2x4x256x256xbf16>, tensor<i32>) -> tensor<4x256x256xbf16>
      %458 = func.call @dynamic_index_in_dim_14(%iterArg_156, %456) : (tensor<2x4x256x1xbf16>, tensor<i32>) -> tensor<4x256x1xbf16>
      %459 = func.call @dynamic_index_in_dim_14(%iterArg_157, %456) : (tensor<2x4x256x1xbf16>, tensor<i32>) -> tensor<4x256x1xbf16>
      %460 = func.call @dynamic_index_in_dim_13(%iterArg_158, %456) : (tensor<2x4x256x256xbf16>, tensor<i32>) -> tensor<4x256x256xbf16>
      %461 = func.call @dynamic_index_in_dim_15(%iterArg_159, %456) : (tensor<2x1x1x256xbf16>, tensor<i32>) -> tensor<1x1x256xbf16>
      %462 = func.call @dynamic_index_in_dim_13(%iterArg_160, %456) : (tensor<2x4x256x256xbf16>, tensor<i32>) -> tensor<4x256x256xbf16>
      %463 = func.call @dynamic_index_in_dim_5(%iterArg_161, %456) : (tensor<2x256x768xbf16>, tensor<i32>) -> tensor<256x768xbf16>
      %464 = func.call @dynamic_index_in_dim_13(%iterArg_162, %456) : (tensor<2x4x256x256xbf16>, tensor<i32>) -> tensor<4x256x256xbf16>
      %465 = func.call @dynamic_index_in_dim_16(%iterArg_163, %456) : (tensor<2x4x256x4x64xbf16>, tensor<i32>) -> tensor<4x256x4x64xbf16>
      %466 = func.call @dynamic_index_in_dim_16(%iterArg_164, %456) : (tensor<2x4x256x4x64xbf16>, tensor<i32>) -> tensor<4x256x4x64xbf16>
      %467 = func.call @dynamic_index_in_dim_16(%iterArg_165, %456) : (tensor<2x4x256x4x64xbf16>, tensor<i32>) -> tensor<4x256x4x64xbf16>
      %468 = func.call @dynamic_index_in_dim_17(%iterArg_166, %456) : (tensor<2x4x4x256xf32>, tensor<i32>) -> tensor<4x4x256xf32>
      %469 = func.call @dynamic_index_in_dim_16(%iterArg_167, %456) : (tensor<2x4x256x4x64xbf16>, tensor<i32>) -> tensor<4x256x4x64xbf16>
      %470 = func.call @dynamic_index_in_dim_3(%iterArg_168, %456) : (tensor<2x256x256xbf16>, tensor<i32>) -> tensor<256x256xbf16>
      %471 = func.call @dynamic_index_in_dim_13(%iterArg_169, %456) : (tensor<2x4x256x256xbf16>, tensor<i32>) -> tensor<4x256x256xbf16>
      %472 = func.call @dynamic_index_in_dim_13(%iterArg_170, %456) : (tensor<2x4x256x256xbf16>, tensor<i32>) -> tensor<4x256x256xbf16>
      %473 = func.call @dynamic_index_in_dim_14(%iterArg_171, %456) : (tensor<2x4x256x1xbf16>, tensor<i32>) -> tensor<4x256x1xbf16>
      %474 = func.call @dynamic_index_in_dim_14(%iterArg_172, %456) : (tensor<2x4x256x1xbf16>, tensor<i32>) -> tensor<4x256x1xbf16>
      %475 = func.call @dynamic_index_in_dim_13(%iterArg_173, %456) : (tensor<2x4x256x256xbf16>, tensor<i32>) -> tensor<4x256x256xbf16>
      %476 = func.call @dynamic_index_in_dim_15(%iterArg_174, %456) : (tensor<2x1x1x256xbf16>, tensor<i32>) -> tensor<1x1x256xbf16>
      %477 = func.call @dynamic_index_in_dim_13(%iterArg_175, %456) : (tensor<2x4x256x256xbf16>, tensor<i32>) -> tensor<4x256x256xbf16>
      %478 = func.call @dynamic_index_in_dim_0(%iterArg_176, %456) : (tensor<2x256x1024xbf16>, tensor<i32>) -> tensor<256x1024xbf16>
      %479 = func.call @dynamic_index_in_dim_13(%iterArg_177, %456) : (tensor<2x4x256x256xbf16>, tensor<i32>) -> tensor<4x256x256xbf16>
      %480 = func.call @dynamic_index_in_dim_18(%iterArg_178, %456) : (tensor<2x4x256x1024xbf16>, tensor<i32>) -> tensor<4x256x1024xbf16>
      %481 = func.call @dynamic_index_in_dim_18(%iterArg_179, %456) : (tensor<2x4x256x1024xbf16>, tensor<i32>) -> tensor<4x256x1024xbf16>
      %482 = func.call @dynamic_index_in_dim_18(%iterArg_180, %456) : (tensor<2x4x256x1024xbf16>, tensor<i32>) -> tensor<4x256x1024xbf16>
      %483 = func.call @dynamic_index_in_dim_18(%iterArg_181, %456) : (tensor<2x4x256x1024xbf16>, tensor<i32>) -> tensor<4x256x1024xbf16>
      %484 = func.call @dynamic_index_in_dim_2(%iterArg_182, %456) : (tensor<2x1024x256xbf16>, tensor<i32>) -> tensor<1024x256xbf16>
      %485 = func.call @dynamic_index_in_dim_18(%iterArg_183, %456) : (tensor<2x4x256x1024xbf16>, tensor<i32>) -> tensor<4x256x1024xbf16>
      %cst_201 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %486 = stablehlo.reduce(%iterArg_186 init: %cst_201) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %487 = stablehlo.reshape %486 : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %cst_202 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %488 = stablehlo.reduce(%487 init: %cst_202) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %489 = stablehlo.dot_general %iterArg_186, %485, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<4x256x256xbf16>, tensor<4x256x1024xbf16>) -> tensor<256x1024xbf16>
      %490 = stablehlo.transpose %489, dims = [1, 0] : (tensor<256x1024xbf16>) -> tensor<1024x256xbf16>
      %491 = stablehlo.dot_general %iterArg_186, %484, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x256x256xbf16>, tensor<1024x256xbf16>) -> tensor<4x256x1024xbf16>
      %492 = stablehlo.multiply %483, %491 : tensor<4x256x1024xbf16>
      %493 = stablehlo.multiply %491, %482 : tensor<4x256x1024xbf16>
      %cst_203 = stablehlo.constant dense<5.000000e-01> : tensor<bf16>
      %494 = stablehlo.broadcast_in_dim %cst_203, dims = [] : (tensor<bf16>) -> tensor<4x256x1024xbf16>
      %495 = stablehlo.multiply %494, %492 : tensor<4x256x1024xbf16>
      %496 = stablehlo.multiply %495, %481 : tensor<4x256x1024xbf16>
      %cst_204 = stablehlo.constant dense<7.968750e-01> : tensor<bf16>
      %497 = stablehlo.broadcast_in_dim %cst_204, dims = [] : (tensor<bf16>) -> tensor<4x256x1024xbf16>
      %498 = stablehlo.multiply %497, %496 : tensor<4x256x1024xbf16>
      %499 = stablehlo.add %493, %498 : tensor<4x256x1024xbf16>
      %cst_205 = stablehlo.constant dense<4.467770e-02> : tensor<bf16>
      %500 = stablehlo.broadcast_in_dim %cst_205, dims = [] : (tensor<bf16>) -> tensor<4x256x1024xbf16>
      %501 = stablehlo.multiply %500, %498 : tensor<4x256x1024xbf16>
      %502 = stablehlo.multiply %501, %480 : tensor<4x256x1024xbf16>
      %503 = stablehlo.add %499, %502 : tensor<4x256x1024xbf16>
      %cst_206 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %504 = stablehlo.reduce(%503 init: %cst_206) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x256x1024xbf16>, tensor<bf16>) -> tensor<1024xbf16>
      %505 = stablehlo.reshape %504 : (tensor<1024xbf16>) -> tensor<1x1x1024xbf16>
      %cst_207 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %506 = stablehlo.reduce(%505 init: %cst_207) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x1024xbf16>, tensor<bf16>) -> tensor<1024xbf16>
      %507 = stablehlo.dot_general %503, %479, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<4x256x1024xbf16>, tensor<4x256x256xbf16>) -> tensor<1024x256xbf16>
      %508 = stablehlo.transpose %507, dims = [1, 0] : (tensor<1024x256xbf16>) -> tensor<256x1024xbf16>
      %509 = stablehlo.dot_general %503, %478, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x256x1024xbf16>, tensor<256x1024xbf16>) -> tensor<4x256x256xbf16>
      %cst_208 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %510 = stablehlo.reduce(%509 init: %cst_208) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %511 = stablehlo.reshape %510 : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %cst_209 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %512 = stablehlo.reduce(%511 init: %cst_209) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %513 = stablehlo.multiply %477, %509 : tensor<4x256x256xbf16>
      %cst_210 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %514 = stablehlo.reduce(%513 init: %cst_210) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %515 = stablehlo.reshape %514 : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %516 = stablehlo.broadcast_in_dim %476, dims = [0, 1, 2] : (tensor<1x1x256xbf16>) -> tensor<4x256x256xbf16>
      %517 = stablehlo.multiply %509, %516 : tensor<4x256x256xbf16>
      %cst_211 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %518 = stablehlo.reduce(%515 init: %cst_211) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %519 = stablehlo.multiply %475, %517 : tensor<4x256x256xbf16>
      %cst_212 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %520 = stablehlo.reduce(%519 init: %cst_212) applies stablehlo.add across dimensions = [2] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<4x256xbf16>
      %521 = stablehlo.reshape %520 : (tensor<4x256xbf16>) -> tensor<4x256x1xbf16>
      %522 = stablehlo.broadcast_in_dim %474, dims = [0, 1, 2] : (tensor<4x256x1xbf16>) -> tensor<4x256x256xbf16>
      %523 = stablehlo.multiply %517, %522 : tensor<4x256x256xbf16>
      %524 = stablehlo.multiply %521, %473 : tensor<4x256x1xbf16>
      %525 = stablehlo.negate %523 : tensor<4x256x256xbf16>
      %cst_213 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %526 = stablehlo.reduce(%525 init: %cst_213) applies stablehlo.add across dimensions = [2] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<4x256xbf16>
      %527 = stablehlo.reshape %526 : (tensor<4x256xbf16>) -> tensor<4x256x1xbf16>
      %528 = stablehlo.add %iterArg_186, %523 : tensor<4x256x256xbf16>
      %529 = stablehlo.convert %524 : (tensor<4x256x1xbf16>) -> tensor<4x256x1xf32>
      %cst_214 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
      %530 = stablehlo.broadcast_in_dim %cst_214, dims = [] : (tensor<f32>) -> tensor<4x256x1xf32>
      %531 = stablehlo.divide %529, %530 : tensor<4x256x1xf32>
      %cst_215 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %532 = stablehlo.reduce(%531 init: %cst_215) applies stablehlo.add across dimensions = [2] : (tensor<4x256x1xf32>, tensor<f32>) -> tensor<4x256xf32>
      %533 = stablehlo.broadcast_in_dim %532, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x256xf32>
      %534 = stablehlo.convert %533 : (tensor<4x256x256xf32>) -> tensor<4x256x256xbf16>
      %535 = stablehlo.multiply %534, %472 : tensor<4x256x256xbf16>
      %536 = stablehlo.negate %535 : tensor<4x256x256xbf16>
      %cst_216 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %537 = stablehlo.reduce(%536 init: %cst_216) applies stablehlo.add across dimensions = [2] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<4x256xbf16>
      %538 = stablehlo.reshape %537 : (tensor<4x256xbf16>) -> tensor<4x256x1xbf16>
      %539 = stablehlo.add %528, %535 : tensor<4x256x256xbf16>
      %540 = stablehlo.add %527, %538 : tensor<4x256x1xbf16>
      %541 = stablehlo.convert %540 : (tensor<4x256x1xbf16>) -> tensor<4x256x1xf32>
      %cst_217 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
      %542 = stablehlo.broadcast_in_dim %cst_217, dims = [] : (tensor<f32>) -> tensor<4x256x1xf32>
      %543 = stablehlo.divide %541, %542 : tensor<4x256x1xf32>
      %cst_218 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %544 = stablehlo.reduce(%543 init: %cst_218) applies stablehlo.add across dimensions = [2] : (tensor<4x256x1xf32>, tensor<f32>) -> tensor<4x256xf32>
      %545 = stablehlo.broadcast_in_dim %544, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x256xf32>
      %546 = stablehlo.convert %545 : (tensor<4x256x256xf32>) -> tensor<4x256x256xbf16>
      %547 = stablehlo.add %539, %546 : tensor<4x256x256xbf16>
      %cst_219 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %548 = stablehlo.reduce(%547 init: %cst_219) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %549 = stablehlo.reshape %548 : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %cst_220 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %550 = stablehlo.reduce(%549 init: %cst_220) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %551 = stablehlo.dot_general %547, %471, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<4x256x256xbf16>, tensor<4x256x256xbf16>) -> tensor<256x256xbf16>
      %552 = stablehlo.transpose %551, dims = [1, 0] : (tensor<256x256xbf16>) -> tensor<256x256xbf16>
      %553 = stablehlo.dot_general %547, %470, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x256x256xbf16>, tensor<256x256xbf16>) -> tensor<4x256x256xbf16>
      %554 = stablehlo.reshape %553 : (tensor<4x256x256xbf16>) -> tensor<4x256x4x64xbf16>
      %555:4 = stablehlo.custom_call @__cudnn$fmhaSoftmaxBackward(%465, %466, %467, %468, %554, %469) {api_version = 2 : i32, backend_config = "{\22operation_queue_id\22: \220\22, \22cudnn_fmha_backend_config\22: {\22algorithm\22: {\22algo_id\22: \220\22, \22math_type\22: \22TENSOR_OP_MATH\22, \22tuning_knobs\22: {\2217\22: \221\22, \2224\22: \220\22}, \22is_cudnn_frontend\22: true, \22workspace_size\22: \220\22}, \22fmha_scale\22: 0.125, \22intermediate_tensor_shape\22: {\22element_type\22: \22BF16\22, \22dimensions\22: [\224\22, \224\22, \22256\22, \22256\22], \22tuple_shapes\22: [], \22layout\22: {\22dim_level_types\22: [], \22dim_unique\22: [], \22dim_ordered\22: [], \22minor_to_major\22: [\223\22, \222\22, \221\22, \220\22], \22tiles\22: [], \22element_size_in_bits\22: \220\22, \22memory_space\22: \220\22, \22index_primitive_type\22: \22PRIMITIVE_TYPE_INVALID\22, \22pointer_primitive_type\22: \22PRIMITIVE_TYPE_INVALID\22, \22dynamic_shape_metadata_prefix_bytes\22: \220\22}, \22is_dynamic_dimension\22: [false, false, false, false]}, \22is_flash_attention\22: true, \22mask_type\22: \22CAUSAL\22, \22bmm1_grad_gemm1_dot_dimension_numbers\22: {\22lhs_contracting_dimensions\22: [\222\22], \22rhs_contracting_dimensions\22: [\221\22], \22lhs_batch_dimensions\22: [\220\22, \221\22], \22rhs_batch_dimensions\22: [\220\22, \222\22]}, \22bmm1_grad_gemm2_dot_dimension_numbers\22: {\22lhs_contracting_dimensions\22: [\223\22], \22rhs_contracting_dimensions\22: [\221\22], \22lhs_batch_dimensions\22: [\220\22, \221\22], \22rhs_batch_dimensions\22: [\220\22, \222\22]}, \22bmm2_grad_gemm1_dot_dimension_numbers\22: {\22lhs_contracting_dimensions\22: [\222\22], \22rhs_contracting_dimensions\22: [\221\22], \22lhs_batch_dimensions\22: [\220\22, \221\22], \22rhs_batch_dimensions\22: [\220\22, \222\22]}, \22bmm2_grad_gemm2_dot_dimension_numbers\22: {\22lhs_contracting_dimensions\22: [\223\22], \22rhs_contracting_dimensions\22: [\223\22], \22lhs_batch_dimensions\22: [\220\22, \222\22], \22rhs_batch_dimensions\22: [\220\22, \222\22]}, \22dropout_rate\22: 0.0, \22seed\22: 42, \22sliding_window_length\22: 0, \22max_seg_per_batch\22: 1, \22is_paged_attention\22: false}}", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>, dense<[3, 2, 1, 0]> : tensor<4xindex>, dense<[3, 2, 1, 0]> : tensor<4xindex>, dense<[2, 1, 0]> : tensor<3xindex>, dense<[3, 2, 1, 0]> : tensor<4xindex>, dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 1, 2, 0]> : tensor<4xindex>, dense<[3, 1, 2, 0]> : tensor<4xindex>, dense<[3, 1, 2, 0]> : tensor<4xindex>, dense<0> : tensor<1xindex>]} : (tensor<4x256x4x64xbf16>, tensor<4x256x4x64xbf16>, tensor<4x256x4x64xbf16>, tensor<4x4x256xf32>, tensor<4x256x4x64xbf16>, tensor<4x256x4x64xbf16>) -> (tensor<4x4x256x64xbf16>, tensor<4x4x256x64xbf16>, tensor<4x4x256x64xbf16>, tensor<0xui8>)
      %556 = stablehlo.transpose %555#0, dims = [0, 2, 1, 3] : (tensor<4x4x256x64xbf16>) -> tensor<4x256x4x64xbf16>
      %557 = stablehlo.transpose %555#1, dims = [0, 2, 1, 3] : (tensor<4x4x256x64xbf16>) -> tensor<4x256x4x64xbf16>
      %558 = stablehlo.transpose %555#2, dims = [0, 2, 1, 3] : (tensor<4x4x256x64xbf16>) -> tensor<4x256x4x64xbf16>
      %559 = stablehlo.reshape %558 : (tensor<4x256x4x64xbf16>) -> tensor<4x256x256xbf16>
      %560 = stablehlo.reshape %557 : (tensor<4x256x4x64xbf16>) -> tensor<4x256x256xbf16>
      %561 = stablehlo.reshape %556 : (tensor<4x256x4x64xbf16>) -> tensor<4x256x256xbf16>
      %562 = stablehlo.concatenate %561, %560, %559, dim = 2 : (tensor<4x256x256xbf16>, tensor<4x256x256xbf16>, tensor<4x256x256xbf16>) -> tensor<4x256x768xbf16>
      %cst_221 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %563 = stablehlo.reduce(%562 init: %cst_221) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x256x768xbf16>, tensor<bf16>) -> tensor<768xbf16>
      %564 = stablehlo.reshape %563 : (tensor<768xbf16>) -> tensor<1x1x768xbf16>
      %cst_222 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %565 = stablehlo.reduce(%564 init: %cst_222) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x768xbf16>, tensor<bf16>) -> tensor<768xbf16>
      %566 = stablehlo.dot_general %562, %464, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<4x256x768xbf16>, tensor<4x256x256xbf16>) -> tensor<768x256xbf16>
      %567 = stablehlo.transpose %566, dims = [1, 0] : (tensor<768x256xbf16>) -> tensor<256x768xbf16>
      %568 = stablehlo.dot_general %562, %463, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x256x768xbf16>, tensor<256x768xbf16>) -> tensor<4x256x256xbf16>
      %cst_223 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %569 = stablehlo.reduce(%568 init: %cst_223) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %570 = stablehlo.reshape %569 : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %cst_224 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %571 = stablehlo.reduce(%570 init: %cst_224) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %572 = stablehlo.multiply %462, %568 : tensor<4x256x256xbf16>
      %cst_225 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %573 = stablehlo.reduce(%572 init: %cst_225) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %574 = stablehlo.reshape %573 : (tensor<256xbf16>) -> tensor<1x1x256xbf16>
      %575 = stablehlo.broadcast_in_dim %461, dims = [0, 1, 2] : (tensor<1x1x256xbf16>) -> tensor<4x256x256xbf16>
      %576 = stablehlo.multiply %568, %575 : tensor<4x256x256xbf16>
      %cst_226 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %577 = stablehlo.reduce(%574 init: %cst_226) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x256xbf16>, tensor<bf16>) -> tensor<256xbf16>
      %578 = stablehlo.multiply %460, %576 : tensor<4x256x256xbf16>
      %cst_227 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %579 = stablehlo.reduce(%578 init: %cst_227) applies stablehlo.add across dimensions = [2] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<4x256xbf16>
      %580 = stablehlo.reshape %579 : (tensor<4x256xbf16>) -> tensor<4x256x1xbf16>
      %581 = stablehlo.broadcast_in_dim %459, dims = [0, 1, 2] : (tensor<4x256x1xbf16>) -> tensor<4x256x256xbf16>
      %582 = stablehlo.multiply %576, %581 : tensor<4x256x256xbf16>
      %583 = stablehlo.multiply %580, %458 : tensor<4x256x1xbf16>
      %584 = stablehlo.negate %582 : tensor<4x256x256xbf16>
      %cst_228 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %585 = stablehlo.reduce(%584 init: %cst_228) applies stablehlo.add across dimensions = [2] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<4x256xbf16>
      %586 = stablehlo.reshape %585 : (tensor<4x256xbf16>) -> tensor<4x256x1xbf16>
      %587 = stablehlo.add %547, %582 : tensor<4x256x256xbf16>
      %588 = stablehlo.convert %583 : (tensor<4x256x1xbf16>) -> tensor<4x256x1xf32>
      %cst_229 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
      %589 = stablehlo.broadcast_in_dim %cst_229, dims = [] : (tensor<f32>) -> tensor<4x256x1xf32>
      %590 = stablehlo.divide %588, %589 : tensor<4x256x1xf32>
      %cst_230 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %591 = stablehlo.reduce(%590 init: %cst_230) applies stablehlo.add across dimensions = [2] : (tensor<4x256x1xf32>, tensor<f32>) -> tensor<4x256xf32>
      %592 = stablehlo.broadcast_in_dim %591, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x256xf32>
      %593 = stablehlo.convert %592 : (tensor<4x256x256xf32>) -> tensor<4x256x256xbf16>
      %594 = stablehlo.multiply %593, %457 : tensor<4x256x256xbf16>
      %595 = stablehlo.negate %594 : tensor<4x256x256xbf16>
      %cst_231 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
      %596 = stablehlo.reduce(%595 init: %cst_231) applies stablehlo.add across dimensions = [2] : (tensor<4x256x256xbf16>, tensor<bf16>) -> tensor<4x256xbf16>
      %597 = stablehlo.reshape %596 : (tensor<4x256xbf16>) -> tensor<4x256x1xbf16>
      %598 = stablehlo.add %587, %594 : tensor<4x256x256xbf16>
      %599 = stablehlo.add %586, %597 : tensor<4x256x1xbf16>
      %600 = stablehlo.convert %599 : (tensor<4x256x1xbf16>) -> tensor<4x256x1xf32>
      %cst_232 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
      %601 = stablehlo.broadcast_in_dim %cst_232, dims = [] : (tensor<f32>) -> tensor<4x256x1xf32>
      %602 = stablehlo.divide %600, %601 : tensor<4x256x1xf32>
      %cst_233 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %603 = stablehlo.reduce(%602 init: %cst_233) applies stablehlo.add across dimensions = [2] : (tensor<4x256x1xf32>, tensor<f32>) -> tensor<4x256xf32>
      %604 = stablehlo.broadcast_in_dim %603, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x256xf32>
      %605 = stablehlo.convert %604 : (tensor<4x256x256xf32>) -> tensor<4x256x256xbf16>
      %606 = stablehlo.add %598, %605 : tensor<4x256x256xbf16>
      %607 = func.call @dynamic_update_index_in_dim_19(%iterArg_187, %506, %456) : (tensor<2x1024xbf16>, tensor<1024xbf16>, tensor<i32>) -> tensor<2x1024xbf16>
      %608 = func.call @dynamic_update_index_in_dim_20(%iterArg_188, %508, %456) : (tensor<2x256x1024xbf16>, tensor<256x1024xbf16>, tensor<i32>) -> tensor<2x256x1024xbf16>
      %609 = func.call @dynamic_update_index_in_dim_21(%iterArg_189, %488, %456) : (tensor<2x256xbf16>, tensor<256xbf16>, tensor<i32>) -> tensor<2x256xbf16>
      %610 = func.call @dynamic_update_index_in_dim_22(%iterArg_190, %490, %456) : (tensor<2x1024x256xbf16>, tensor<1024x256xbf16>, tensor<i32>) -> tensor<2x1024x256xbf16>
      %611 = func.call @dynamic_update_index_in_dim_21(%iterArg_191, %571, %456) : (tensor<2x256xbf16>, tensor<256xbf16>, tensor<i32>) -> tensor<2x256xbf16>
      %612 = func.call @dynamic_update_index_in_dim_21(%iterArg_192, %577, %456) : (tensor<2x256xbf16>, tensor<256xbf16>, tensor<i32>) -> tensor<2x256xbf16>
      %613 = func.call @dynamic_update_index_in_dim_21(%iterArg_193, %512, %456) : (tensor<2x256xbf16>, tensor<256xbf16>, tensor<i32>) -> tensor<2x256xbf16>
      %614 = func.call @dynamic_update_index_in_dim_21(%iterArg_194, %518, %456) : (tensor<2x256xbf16>, tensor<256xbf16>, tensor<i32>) -> tensor<2x256xbf16>
      %615 = func.call @dynamic_update_index_in_dim_21(%iterArg_195, %550, %456) : (tensor<2x256xbf16>, tensor<256xbf16>, tensor<i32>) -> tensor<2x256xbf16>
      %616 = func.call @dynamic_update_index_in_dim_23(%iterArg_196, %552, %456) : (tensor<2x256x256xbf16>, tensor<256x256xbf16>, tensor<i32>) -> tensor<2x256x256xbf16>
      %617 = func.call @dynamic_update_index_in_dim_24(%iterArg_197, %565, %456) : (tensor<2x768xbf16>, tensor<768xbf16>, tensor<i32>) -> tensor<2x768xbf16>
      %618 = func.call @dynamic_update_index_in_dim_25(%iterArg_198, %567, %456) : (tensor<2x256x768xbf16>, tensor<256x768xbf16>, tensor<i32>) -> tensor<2x256x768xbf16>
      %c_234 = stablehlo.constant dense<1> : tensor<i32>
      %619 = stablehlo.add %iterArg_185, %c_234 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_156, %iterArg_157, %iterArg_158, %iterArg_159, %iterArg_160, %iterArg_161, %iterArg_162, %iterArg_163, %iterArg_164, %iterArg_165, %iterArg_166, %iterArg_167, %iterArg_168, %iterArg_169, %iterArg_170, %iterArg_171, %iterArg_172, %iterArg_173, %iterArg_174, %iterArg_175, %iterArg_176, %iterArg_177, %iterArg_178, %iterArg_179, %iterArg_180, %iterArg_181, %iterArg_182, %iterArg_183, %iterArg_184, %619, %606, %607, %608, %609, %610, %611, %612, %613, %614, %615, %616, %617, %618 : tensor<2x4x256x256xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x256xbf16>, tensor<2x1x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x256x768xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x256x4x64xbf16>, tensor<2x4x4x256xf32>, tensor<2x4x256x4x64xbf16>, tensor<2x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x1xbf16>, tensor<2x4x256x256xbf16>, tensor<2x1x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x256x1024xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x4x256x1024xbf16>, tensor<2x1024x256xbf16>, tensor<2x4x256x1024xbf16>, tensor<0xbf16>, tensor<i32>, tensor<4x256x256xbf16>, tensor<2x1024xbf16>, tensor<2x256x1024xbf16>, tensor<2x256xbf16>, tensor<2x1024x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256x256xbf16>, tensor<2x768xbf16>, tensor<2x256x768xbf16>
    }
    %cst_44 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %66 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %67 = "stablehlo.scatter"(%66, %5, %65#31) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg42: tensor<bf16>, %arg43: tensor<bf16>):
      %455 = stablehlo.add %arg42, %arg43 : tensor<bf16>
      stablehlo.return %455 : tensor<bf16>
    }) : (tensor<512x256xbf16>, tensor<4x256x1xi32>, tensor<4x256x256xbf16>) -> tensor<512x256xbf16>
    %68 = stablehlo.add %52, %67 : tensor<512x256xbf16>
    %cst_45 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %69 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %70 = stablehlo.multiply %69, %65#32 : tensor<2x1024xbf16>
    %cst_46 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %71 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %72 = stablehlo.multiply %71, %arg14 : tensor<2x1024xbf16>
    %73 = stablehlo.add %70, %72 : tensor<2x1024xbf16>
    %cst_47 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %74 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %75 = stablehlo.multiply %74, %65#33 : tensor<2x256x1024xbf16>
    %cst_48 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %76 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %77 = stablehlo.multiply %76, %arg15 : tensor<2x256x1024xbf16>
    %78 = stablehlo.add %75, %77 : tensor<2x256x1024xbf16>
    %cst_49 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %79 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %80 = stablehlo.multiply %79, %65#34 : tensor<2x256xbf16>
    %cst_50 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %81 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %82 = stablehlo.multiply %81, %arg16 : tensor<2x256xbf16>
    %83 = stablehlo.add %80, %82 : tensor<2x256xbf16>
    %cst_51 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %84 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %85 = stablehlo.multiply %84, %65#35 : tensor<2x1024x256xbf16>
    %cst_52 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %86 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %87 = stablehlo.multiply %86, %arg17 : tensor<2x1024x256xbf16>
    %88 = stablehlo.add %85, %87 : tensor<2x1024x256xbf16>
    %cst_53 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %89 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %90 = stablehlo.multiply %89, %65#36 : tensor<2x256xbf16>
    %cst_54 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %91 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %92 = stablehlo.multiply %91, %arg18 : tensor<2x256xbf16>
    %93 = stablehlo.add %90, %92 : tensor<2x256xbf16>
    %cst_55 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %94 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %95 = stablehlo.multiply %94, %65#37 : tensor<2x256xbf16>
    %cst_56 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %96 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %97 = stablehlo.multiply %96, %arg19 : tensor<2x256xbf16>
    %98 = stablehlo.add %95, %97 : tensor<2x256xbf16>
    %cst_57 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %99 = stablehlo.broadcast_in_dim %cst_57, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %100 = stablehlo.multiply %99, %65#38 : tensor<2x256xbf16>
    %cst_58 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %101 = stablehlo.broadcast_in_dim %cst_58, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %102 = stablehlo.multiply %101, %arg20 : tensor<2x256xbf16>
    %103 = stablehlo.add %100, %102 : tensor<2x256xbf16>
    %cst_59 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %104 = stablehlo.broadcast_in_dim %cst_59, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %105 = stablehlo.multiply %104, %65#39 : tensor<2x256xbf16>
    %cst_60 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %106 = stablehlo.broadcast_in_dim %cst_60, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %107 = stablehlo.multiply %106, %arg21 : tensor<2x256xbf16>
    %108 = stablehlo.add %105, %107 : tensor<2x256xbf16>
    %cst_61 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %109 = stablehlo.broadcast_in_dim %cst_61, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %110 = stablehlo.multiply %109, %65#40 : tensor<2x256xbf16>
    %cst_62 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %111 = stablehlo.broadcast_in_dim %cst_62, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %112 = stablehlo.multiply %111, %arg22 : tensor<2x256xbf16>
    %113 = stablehlo.add %110, %112 : tensor<2x256xbf16>
    %cst_63 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %114 = stablehlo.broadcast_in_dim %cst_63, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %115 = stablehlo.multiply %114, %65#41 : tensor<2x256x256xbf16>
    %cst_64 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %116 = stablehlo.broadcast_in_dim %cst_64, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %117 = stablehlo.multiply %116, %arg23 : tensor<2x256x256xbf16>
    %118 = stablehlo.add %115, %117 : tensor<2x256x256xbf16>
    %cst_65 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %119 = stablehlo.broadcast_in_dim %cst_65, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %120 = stablehlo.multiply %119, %65#42 : tensor<2x768xbf16>
    %cst_66 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %121 = stablehlo.broadcast_in_dim %cst_66, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %122 = stablehlo.multiply %121, %arg24 : tensor<2x768xbf16>
    %123 = stablehlo.add %120, %122 : tensor<2x768xbf16>
    %cst_67 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %124 = stablehlo.broadcast_in_dim %cst_67, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %125 = stablehlo.multiply %124, %65#43 : tensor<2x256x768xbf16>
    %cst_68 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %126 = stablehlo.broadcast_in_dim %cst_68, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %127 = stablehlo.multiply %126, %arg25 : tensor<2x256x768xbf16>
    %128 = stablehlo.add %125, %127 : tensor<2x256x768xbf16>
    %cst_69 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %129 = stablehlo.broadcast_in_dim %cst_69, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %130 = stablehlo.multiply %129, %68 : tensor<512x256xbf16>
    %cst_70 = stablehlo.constant dense<8.984370e-01> : tensor<bf16>
    %131 = stablehlo.broadcast_in_dim %cst_70, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %132 = stablehlo.multiply %131, %arg26 : tensor<512x256xbf16>
    %133 = stablehlo.add %130, %132 : tensor<512x256xbf16>
    %134 = stablehlo.multiply %65#32, %65#32 : tensor<2x1024xbf16>
    %cst_71 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %135 = stablehlo.broadcast_in_dim %cst_71, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %136 = stablehlo.multiply %135, %134 : tensor<2x1024xbf16>
    %cst_72 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %137 = stablehlo.broadcast_in_dim %cst_72, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %138 = stablehlo.multiply %137, %arg27 : tensor<2x1024xbf16>
    %139 = stablehlo.add %136, %138 : tensor<2x1024xbf16>
    %140 = stablehlo.multiply %65#33, %65#33 : tensor<2x256x1024xbf16>
    %cst_73 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %141 = stablehlo.broadcast_in_dim %cst_73, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %142 = stablehlo.multiply %141, %140 : tensor<2x256x1024xbf16>
    %cst_74 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %143 = stablehlo.broadcast_in_dim %cst_74, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %144 = stablehlo.multiply %143, %arg28 : tensor<2x256x1024xbf16>
    %145 = stablehlo.add %142, %144 : tensor<2x256x1024xbf16>
    %146 = stablehlo.multiply %65#34, %65#34 : tensor<2x256xbf16>
    %cst_75 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %147 = stablehlo.broadcast_in_dim %cst_75, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %148 = stablehlo.multiply %147, %146 : tensor<2x256xbf16>
    %cst_76 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %149 = stablehlo.broadcast_in_dim %cst_76, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %150 = stablehlo.multiply %149, %arg29 : tensor<2x256xbf16>
    %151 = stablehlo.add %148, %150 : tensor<2x256xbf16>
    %152 = stablehlo.multiply %65#35, %65#35 : tensor<2x1024x256xbf16>
    %cst_77 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %153 = stablehlo.broadcast_in_dim %cst_77, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %154 = stablehlo.multiply %153, %152 : tensor<2x1024x256xbf16>
    %cst_78 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %155 = stablehlo.broadcast_in_dim %cst_78, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %156 = stablehlo.multiply %155, %arg30 : tensor<2x1024x256xbf16>
    %157 = stablehlo.add %154, %156 : tensor<2x1024x256xbf16>
    %158 = stablehlo.multiply %65#36, %65#36 : tensor<2x256xbf16>
    %cst_79 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %159 = stablehlo.broadcast_in_dim %cst_79, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %160 = stablehlo.multiply %159, %158 : tensor<2x256xbf16>
    %cst_80 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %161 = stablehlo.broadcast_in_dim %cst_80, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %162 = stablehlo.multiply %161, %arg31 : tensor<2x256xbf16>
    %163 = stablehlo.add %160, %162 : tensor<2x256xbf16>
    %164 = stablehlo.multiply %65#37, %65#37 : tensor<2x256xbf16>
    %cst_81 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %165 = stablehlo.broadcast_in_dim %cst_81, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %166 = stablehlo.multiply %165, %164 : tensor<2x256xbf16>
    %cst_82 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %167 = stablehlo.broadcast_in_dim %cst_82, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %168 = stablehlo.multiply %167, %arg32 : tensor<2x256xbf16>
    %169 = stablehlo.add %166, %168 : tensor<2x256xbf16>
    %170 = stablehlo.multiply %65#38, %65#38 : tensor<2x256xbf16>
    %cst_83 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %171 = stablehlo.broadcast_in_dim %cst_83, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %172 = stablehlo.multiply %171, %170 : tensor<2x256xbf16>
    %cst_84 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %173 = stablehlo.broadcast_in_dim %cst_84, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %174 = stablehlo.multiply %173, %arg33 : tensor<2x256xbf16>
    %175 = stablehlo.add %172, %174 : tensor<2x256xbf16>
    %176 = stablehlo.multiply %65#39, %65#39 : tensor<2x256xbf16>
    %cst_85 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %177 = stablehlo.broadcast_in_dim %cst_85, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %178 = stablehlo.multiply %177, %176 : tensor<2x256xbf16>
    %cst_86 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %179 = stablehlo.broadcast_in_dim %cst_86, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %180 = stablehlo.multiply %179, %arg34 : tensor<2x256xbf16>
    %181 = stablehlo.add %178, %180 : tensor<2x256xbf16>
    %182 = stablehlo.multiply %65#40, %65#40 : tensor<2x256xbf16>
    %cst_87 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %183 = stablehlo.broadcast_in_dim %cst_87, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %184 = stablehlo.multiply %183, %182 : tensor<2x256xbf16>
    %cst_88 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %185 = stablehlo.broadcast_in_dim %cst_88, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %186 = stablehlo.multiply %185, %arg35 : tensor<2x256xbf16>
    %187 = stablehlo.add %184, %186 : tensor<2x256xbf16>
    %188 = stablehlo.multiply %65#41, %65#41 : tensor<2x256x256xbf16>
    %cst_89 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %189 = stablehlo.broadcast_in_dim %cst_89, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %190 = stablehlo.multiply %189, %188 : tensor<2x256x256xbf16>
    %cst_90 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %191 = stablehlo.broadcast_in_dim %cst_90, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %192 = stablehlo.multiply %191, %arg36 : tensor<2x256x256xbf16>
    %193 = stablehlo.add %190, %192 : tensor<2x256x256xbf16>
    %194 = stablehlo.multiply %65#42, %65#42 : tensor<2x768xbf16>
    %cst_91 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %195 = stablehlo.broadcast_in_dim %cst_91, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %196 = stablehlo.multiply %195, %194 : tensor<2x768xbf16>
    %cst_92 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %197 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %198 = stablehlo.multiply %197, %arg37 : tensor<2x768xbf16>
    %199 = stablehlo.add %196, %198 : tensor<2x768xbf16>
    %200 = stablehlo.multiply %65#43, %65#43 : tensor<2x256x768xbf16>
    %cst_93 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %201 = stablehlo.broadcast_in_dim %cst_93, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %202 = stablehlo.multiply %201, %200 : tensor<2x256x768xbf16>
    %cst_94 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %203 = stablehlo.broadcast_in_dim %cst_94, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %204 = stablehlo.multiply %203, %arg38 : tensor<2x256x768xbf16>
    %205 = stablehlo.add %202, %204 : tensor<2x256x768xbf16>
    %206 = stablehlo.multiply %68, %68 : tensor<512x256xbf16>
    %cst_95 = stablehlo.constant dense<9.994500e-04> : tensor<bf16>
    %207 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %208 = stablehlo.multiply %207, %206 : tensor<512x256xbf16>
    %cst_96 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %209 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %210 = stablehlo.multiply %209, %arg39 : tensor<512x256xbf16>
    %211 = stablehlo.add %208, %210 : tensor<512x256xbf16>
    %c_97 = stablehlo.constant dense<2147483647> : tensor<i32>
    %212 = stablehlo.compare LT, %arg13, %c_97, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_98 = stablehlo.constant dense<1> : tensor<i32>
    %213 = stablehlo.add %arg13, %c_98 : tensor<i32>
    %c_99 = stablehlo.constant dense<2147483647> : tensor<i32>
    %214 = call @_where(%212, %213, %c_99) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %cst_100 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %215 = stablehlo.convert %214 : (tensor<i32>) -> tensor<f32>
    %216 = stablehlo.power %cst_100, %215 : tensor<f32>
    %cst_101 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %217 = stablehlo.subtract %cst_101, %216 : tensor<f32>
    %218 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %219 = stablehlo.broadcast_in_dim %218, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %220 = stablehlo.divide %73, %219 : tensor<2x1024xbf16>
    %221 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %222 = stablehlo.broadcast_in_dim %221, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %223 = stablehlo.divide %78, %222 : tensor<2x256x1024xbf16>
    %224 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %225 = stablehlo.broadcast_in_dim %224, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %226 = stablehlo.divide %83, %225 : tensor<2x256xbf16>
    %227 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %228 = stablehlo.broadcast_in_dim %227, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %229 = stablehlo.divide %88, %228 : tensor<2x1024x256xbf16>
    %230 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %231 = stablehlo.broadcast_in_dim %230, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %232 = stablehlo.divide %93, %231 : tensor<2x256xbf16>
    %233 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %234 = stablehlo.broadcast_in_dim %233, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %235 = stablehlo.divide %98, %234 : tensor<2x256xbf16>
    %236 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %237 = stablehlo.broadcast_in_dim %236, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %238 = stablehlo.divide %103, %237 : tensor<2x256xbf16>
    %239 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %240 = stablehlo.broadcast_in_dim %239, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %241 = stablehlo.divide %108, %240 : tensor<2x256xbf16>
    %242 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %243 = stablehlo.broadcast_in_dim %242, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %244 = stablehlo.divide %113, %243 : tensor<2x256xbf16>
    %245 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %246 = stablehlo.broadcast_in_dim %245, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %247 = stablehlo.divide %118, %246 : tensor<2x256x256xbf16>
    %248 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %249 = stablehlo.broadcast_in_dim %248, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %250 = stablehlo.divide %123, %249 : tensor<2x768xbf16>
    %251 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %252 = stablehlo.broadcast_in_dim %251, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %253 = stablehlo.divide %128, %252 : tensor<2x256x768xbf16>
    %254 = stablehlo.convert %217 : (tensor<f32>) -> tensor<bf16>
    %255 = stablehlo.broadcast_in_dim %254, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %256 = stablehlo.divide %133, %255 : tensor<512x256xbf16>
    %cst_102 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %257 = stablehlo.convert %214 : (tensor<i32>) -> tensor<f32>
    %258 = stablehlo.power %cst_102, %257 : tensor<f32>
    %cst_103 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %259 = stablehlo.subtract %cst_103, %258 : tensor<f32>
    %260 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %261 = stablehlo.broadcast_in_dim %260, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %262 = stablehlo.divide %139, %261 : tensor<2x1024xbf16>
    %263 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %264 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %265 = stablehlo.divide %145, %264 : tensor<2x256x1024xbf16>
    %266 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %267 = stablehlo.broadcast_in_dim %266, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %268 = stablehlo.divide %151, %267 : tensor<2x256xbf16>
    %269 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %270 = stablehlo.broadcast_in_dim %269, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %271 = stablehlo.divide %157, %270 : tensor<2x1024x256xbf16>
    %272 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %273 = stablehlo.broadcast_in_dim %272, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %274 = stablehlo.divide %163, %273 : tensor<2x256xbf16>
    %275 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %276 = stablehlo.broadcast_in_dim %275, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %277 = stablehlo.divide %169, %276 : tensor<2x256xbf16>
    %278 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %279 = stablehlo.broadcast_in_dim %278, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %280 = stablehlo.divide %175, %279 : tensor<2x256xbf16>
    %281 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %282 = stablehlo.broadcast_in_dim %281, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %283 = stablehlo.divide %181, %282 : tensor<2x256xbf16>
    %284 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %285 = stablehlo.broadcast_in_dim %284, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %286 = stablehlo.divide %187, %285 : tensor<2x256xbf16>
    %287 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %288 = stablehlo.broadcast_in_dim %287, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %289 = stablehlo.divide %193, %288 : tensor<2x256x256xbf16>
    %290 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %291 = stablehlo.broadcast_in_dim %290, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %292 = stablehlo.divide %199, %291 : tensor<2x768xbf16>
    %293 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %294 = stablehlo.broadcast_in_dim %293, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %295 = stablehlo.divide %205, %294 : tensor<2x256x768xbf16>
    %296 = stablehlo.convert %259 : (tensor<f32>) -> tensor<bf16>
    %297 = stablehlo.broadcast_in_dim %296, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %298 = stablehlo.divide %211, %297 : tensor<512x256xbf16>
    %cst_104 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %299 = stablehlo.broadcast_in_dim %cst_104, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %300 = stablehlo.add %262, %299 : tensor<2x1024xbf16>
    %301 = stablehlo.sqrt %300 : tensor<2x1024xbf16>
    %cst_105 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %302 = stablehlo.broadcast_in_dim %cst_105, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %303 = stablehlo.add %301, %302 : tensor<2x1024xbf16>
    %304 = stablehlo.divide %220, %303 : tensor<2x1024xbf16>
    %cst_106 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %305 = stablehlo.broadcast_in_dim %cst_106, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %306 = stablehlo.add %265, %305 : tensor<2x256x1024xbf16>
    %307 = stablehlo.sqrt %306 : tensor<2x256x1024xbf16>
    %cst_107 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %308 = stablehlo.broadcast_in_dim %cst_107, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %309 = stablehlo.add %307, %308 : tensor<2x256x1024xbf16>
    %310 = stablehlo.divide %223, %309 : tensor<2x256x1024xbf16>
    %cst_108 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %311 = stablehlo.broadcast_in_dim %cst_108, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %312 = stablehlo.add %268, %311 : tensor<2x256xbf16>
    %313 = stablehlo.sqrt %312 : tensor<2x256xbf16>
    %cst_109 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %314 = stablehlo.broadcast_in_dim %cst_109, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %315 = stablehlo.add %313, %314 : tensor<2x256xbf16>
    %316 = stablehlo.divide %226, %315 : tensor<2x256xbf16>
    %cst_110 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %317 = stablehlo.broadcast_in_dim %cst_110, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %318 = stablehlo.add %271, %317 : tensor<2x1024x256xbf16>
    %319 = stablehlo.sqrt %318 : tensor<2x1024x256xbf16>
    %cst_111 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %320 = stablehlo.broadcast_in_dim %cst_111, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %321 = stablehlo.add %319, %320 : tensor<2x1024x256xbf16>
    %322 = stablehlo.divide %229, %321 : tensor<2x1024x256xbf16>
    %cst_112 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %323 = stablehlo.broadcast_in_dim %cst_112, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %324 = stablehlo.add %274, %323 : tensor<2x256xbf16>
    %325 = stablehlo.sqrt %324 : tensor<2x256xbf16>
    %cst_113 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %326 = stablehlo.broadcast_in_dim %cst_113, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %327 = stablehlo.add %325, %326 : tensor<2x256xbf16>
    %328 = stablehlo.divide %232, %327 : tensor<2x256xbf16>
    %cst_114 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %329 = stablehlo.broadcast_in_dim %cst_114, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %330 = stablehlo.add %277, %329 : tensor<2x256xbf16>
    %331 = stablehlo.sqrt %330 : tensor<2x256xbf16>
    %cst_115 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %332 = stablehlo.broadcast_in_dim %cst_115, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %333 = stablehlo.add %331, %332 : tensor<2x256xbf16>
    %334 = stablehlo.divide %235, %333 : tensor<2x256xbf16>
    %cst_116 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %335 = stablehlo.broadcast_in_dim %cst_116, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %336 = stablehlo.add %280, %335 : tensor<2x256xbf16>
    %337 = stablehlo.sqrt %336 : tensor<2x256xbf16>
    %cst_117 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %338 = stablehlo.broadcast_in_dim %cst_117, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %339 = stablehlo.add %337, %338 : tensor<2x256xbf16>
    %340 = stablehlo.divide %238, %339 : tensor<2x256xbf16>
    %cst_118 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %341 = stablehlo.broadcast_in_dim %cst_118, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %342 = stablehlo.add %283, %341 : tensor<2x256xbf16>
    %343 = stablehlo.sqrt %342 : tensor<2x256xbf16>
    %cst_119 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %344 = stablehlo.broadcast_in_dim %cst_119, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %345 = stablehlo.add %343, %344 : tensor<2x256xbf16>
    %346 = stablehlo.divide %241, %345 : tensor<2x256xbf16>
    %cst_120 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %347 = stablehlo.broadcast_in_dim %cst_120, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %348 = stablehlo.add %286, %347 : tensor<2x256xbf16>
    %349 = stablehlo.sqrt %348 : tensor<2x256xbf16>
    %cst_121 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %350 = stablehlo.broadcast_in_dim %cst_121, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %351 = stablehlo.add %349, %350 : tensor<2x256xbf16>
    %352 = stablehlo.divide %244, %351 : tensor<2x256xbf16>
    %cst_122 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %353 = stablehlo.broadcast_in_dim %cst_122, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %354 = stablehlo.add %289, %353 : tensor<2x256x256xbf16>
    %355 = stablehlo.sqrt %354 : tensor<2x256x256xbf16>
    %cst_123 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %356 = stablehlo.broadcast_in_dim %cst_123, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %357 = stablehlo.add %355, %356 : tensor<2x256x256xbf16>
    %358 = stablehlo.divide %247, %357 : tensor<2x256x256xbf16>
    %cst_124 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %359 = stablehlo.broadcast_in_dim %cst_124, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %360 = stablehlo.add %292, %359 : tensor<2x768xbf16>
    %361 = stablehlo.sqrt %360 : tensor<2x768xbf16>
    %cst_125 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %362 = stablehlo.broadcast_in_dim %cst_125, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %363 = stablehlo.add %361, %362 : tensor<2x768xbf16>
    %364 = stablehlo.divide %250, %363 : tensor<2x768xbf16>
    %cst_126 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %365 = stablehlo.broadcast_in_dim %cst_126, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %366 = stablehlo.add %295, %365 : tensor<2x256x768xbf16>
    %367 = stablehlo.sqrt %366 : tensor<2x256x768xbf16>
    %cst_127 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %368 = stablehlo.broadcast_in_dim %cst_127, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %369 = stablehlo.add %367, %368 : tensor<2x256x768xbf16>
    %370 = stablehlo.divide %253, %369 : tensor<2x256x768xbf16>
    %cst_128 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %371 = stablehlo.broadcast_in_dim %cst_128, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %372 = stablehlo.add %298, %371 : tensor<512x256xbf16>
    %373 = stablehlo.sqrt %372 : tensor<512x256xbf16>
    %cst_129 = stablehlo.constant dense<1.001170e-08> : tensor<bf16>
    %374 = stablehlo.broadcast_in_dim %cst_129, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %375 = stablehlo.add %373, %374 : tensor<512x256xbf16>
    %376 = stablehlo.divide %256, %375 : tensor<512x256xbf16>
    %cst_130 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %377 = stablehlo.broadcast_in_dim %cst_130, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %378 = stablehlo.multiply %377, %arg0 : tensor<2x1024xbf16>
    %379 = stablehlo.add %304, %378 : tensor<2x1024xbf16>
    %cst_131 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %380 = stablehlo.broadcast_in_dim %cst_131, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %381 = stablehlo.multiply %380, %arg1 : tensor<2x256x1024xbf16>
    %382 = stablehlo.add %310, %381 : tensor<2x256x1024xbf16>
    %cst_132 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %383 = stablehlo.broadcast_in_dim %cst_132, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %384 = stablehlo.multiply %383, %arg2 : tensor<2x256xbf16>
    %385 = stablehlo.add %316, %384 : tensor<2x256xbf16>
    %cst_133 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %386 = stablehlo.broadcast_in_dim %cst_133, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %387 = stablehlo.multiply %386, %arg3 : tensor<2x1024x256xbf16>
    %388 = stablehlo.add %322, %387 : tensor<2x1024x256xbf16>
    %cst_134 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %389 = stablehlo.broadcast_in_dim %cst_134, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %390 = stablehlo.multiply %389, %arg4 : tensor<2x256xbf16>
    %391 = stablehlo.add %328, %390 : tensor<2x256xbf16>
    %cst_135 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %392 = stablehlo.broadcast_in_dim %cst_135, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %393 = stablehlo.multiply %392, %arg5 : tensor<2x256xbf16>
    %394 = stablehlo.add %334, %393 : tensor<2x256xbf16>
    %cst_136 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %395 = stablehlo.broadcast_in_dim %cst_136, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %396 = stablehlo.multiply %395, %arg6 : tensor<2x256xbf16>
    %397 = stablehlo.add %340, %396 : tensor<2x256xbf16>
    %cst_137 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %398 = stablehlo.broadcast_in_dim %cst_137, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %399 = stablehlo.multiply %398, %arg7 : tensor<2x256xbf16>
    %400 = stablehlo.add %346, %399 : tensor<2x256xbf16>
    %cst_138 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %401 = stablehlo.broadcast_in_dim %cst_138, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %402 = stablehlo.multiply %401, %arg8 : tensor<2x256xbf16>
    %403 = stablehlo.add %352, %402 : tensor<2x256xbf16>
    %cst_139 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %404 = stablehlo.broadcast_in_dim %cst_139, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %405 = stablehlo.multiply %404, %arg9 : tensor<2x256x256xbf16>
    %406 = stablehlo.add %358, %405 : tensor<2x256x256xbf16>
    %cst_140 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %407 = stablehlo.broadcast_in_dim %cst_140, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %408 = stablehlo.multiply %407, %arg10 : tensor<2x768xbf16>
    %409 = stablehlo.add %364, %408 : tensor<2x768xbf16>
    %cst_141 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %410 = stablehlo.broadcast_in_dim %cst_141, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %411 = stablehlo.multiply %410, %arg11 : tensor<2x256x768xbf16>
    %412 = stablehlo.add %370, %411 : tensor<2x256x768xbf16>
    %cst_142 = stablehlo.constant dense<1.000980e-01> : tensor<bf16>
    %413 = stablehlo.broadcast_in_dim %cst_142, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %414 = stablehlo.multiply %413, %arg12 : tensor<512x256xbf16>
    %415 = stablehlo.add %376, %414 : tensor<512x256xbf16>
    %cst_143 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %416 = stablehlo.broadcast_in_dim %cst_143, dims = [] : (tensor<bf16>) -> tensor<2x1024xbf16>
    %417 = stablehlo.multiply %416, %379 : tensor<2x1024xbf16>
    %cst_144 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %418 = stablehlo.broadcast_in_dim %cst_144, dims = [] : (tensor<bf16>) -> tensor<2x256x1024xbf16>
    %419 = stablehlo.multiply %418, %382 : tensor<2x256x1024xbf16>
    %cst_145 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %420 = stablehlo.broadcast_in_dim %cst_145, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %421 = stablehlo.multiply %420, %385 : tensor<2x256xbf16>
    %cst_146 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %422 = stablehlo.broadcast_in_dim %cst_146, dims = [] : (tensor<bf16>) -> tensor<2x1024x256xbf16>
    %423 = stablehlo.multiply %422, %388 : tensor<2x1024x256xbf16>
    %cst_147 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %424 = stablehlo.broadcast_in_dim %cst_147, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %425 = stablehlo.multiply %424, %391 : tensor<2x256xbf16>
    %cst_148 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %426 = stablehlo.broadcast_in_dim %cst_148, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %427 = stablehlo.multiply %426, %394 : tensor<2x256xbf16>
    %cst_149 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %428 = stablehlo.broadcast_in_dim %cst_149, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %429 = stablehlo.multiply %428, %397 : tensor<2x256xbf16>
    %cst_150 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %430 = stablehlo.broadcast_in_dim %cst_150, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %431 = stablehlo.multiply %430, %400 : tensor<2x256xbf16>
    %cst_151 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %432 = stablehlo.broadcast_in_dim %cst_151, dims = [] : (tensor<bf16>) -> tensor<2x256xbf16>
    %433 = stablehlo.multiply %432, %403 : tensor<2x256xbf16>
    %cst_152 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %434 = stablehlo.broadcast_in_dim %cst_152, dims = [] : (tensor<bf16>) -> tensor<2x256x256xbf16>
    %435 = stablehlo.multiply %434, %406 : tensor<2x256x256xbf16>
    %cst_153 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %436 = stablehlo.broadcast_in_dim %cst_153, dims = [] : (tensor<bf16>) -> tensor<2x768xbf16>
    %437 = stablehlo.multiply %436, %409 : tensor<2x768xbf16>
    %cst_154 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %438 = stablehlo.broadcast_in_dim %cst_154, dims = [] : (tensor<bf16>) -> tensor<2x256x768xbf16>
    %439 = stablehlo.multiply %438, %412 : tensor<2x256x768xbf16>
    %cst_155 = stablehlo.constant dense<-2.994540e-04> : tensor<bf16>
    %440 = stablehlo.broadcast_in_dim %cst_155, dims = [] : (tensor<bf16>) -> tensor<512x256xbf16>
    %441 = stablehlo.multiply %440, %415 : tensor<512x256xbf16>
    %442 = stablehlo.add %arg0, %417 : tensor<2x1024xbf16>
    %443 = stablehlo.add %arg1, %419 : tensor<2x256x1024xbf16>
    %444 = stablehlo.add %arg2, %421 : tensor<2x256xbf16>
    %445 = stablehlo.add %arg3, %423 : tensor<2x1024x256xbf16>
    %446 = stablehlo.add %arg4, %425 : tensor<2x256xbf16>
    %447 = stablehlo.add %arg5, %427 : tensor<2x256xbf16>
    %448 = stablehlo.add %arg6, %429 : tensor<2x256xbf16>
    %449 = stablehlo.add %arg7, %431 : tensor<2x256xbf16>
    %450 = stablehlo.add %arg8, %433 : tensor<2x256xbf16>
    %451 = stablehlo.add %arg9, %435 : tensor<2x256x256xbf16>
    %452 = stablehlo.add %arg10, %437 : tensor<2x768xbf16>
    %453 = stablehlo.add %arg11, %439 : tensor<2x256x768xbf16>
    %454 = stablehlo.add %arg12, %441 : tensor<512x256xbf16>
    return %442, %443, %444, %445, %446, %447, %448, %449, %450, %451, %452, %453, %454, %214, %73, %78, %83, %88, %93, %98, %103, %108, %113, %118, %123, %128, %133, %139, %145, %151, %157, %163, %169, %175, %181, %187, %193, %199, %205, %211, %42 : tensor<2x1024xbf16>, tensor<2x256x1024xbf16>, tensor<2x256xbf16>, tensor<2x1024x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256x256xbf16>, tensor<2x768xbf16>, tensor<2x256x768xbf16>, tensor<512x256xbf16>, tensor<i32>, tensor<2x1024xbf16>, tensor<2x256x1024xbf16>, tensor<2x256xbf16>, tensor<2x1024x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256x256xbf16>, tensor<2x768xbf16>, tensor<2x256x768xbf16>, tensor<512x256xbf16>, tensor<2x1024xbf16>, tensor<2x256x1024xbf16>, tensor<2x256xbf16>, tensor<2x1024x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256xbf16>, tensor<2x256x256xbf16>, tensor<2x768xbf16>, tensor<2x256x768xbf16>, tensor<512x256xbf16>, tensor<f32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<2x1024xbf16>, %arg1: tensor<i32>) -> tensor<1024xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 1024] : (tensor<2x1024xbf16>, tensor<i32>, tensor<i32>) -> tensor<1x1024xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x1024xbf16>) -> tensor<1024xbf16>
    return %1 : tensor<1024xbf16>
  }
  func.func private @dynamic_index_in_dim_0(%arg0: tensor<2x256x1024xbf16>, %arg1: tensor<i32>) -> tensor<256x1024xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 256, 1024] : (tensor<2x256x1024xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x256x1024xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x256x1024xbf16>) -> tensor<256x1024xbf16>
    return %1 : tensor<256x1024xbf16>
  }
  func.func private @dynamic_index_in_dim_1(%arg0: tensor<2x256xbf16>, %arg1: tensor<i32>) -> tensor<256xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 256] : (tensor<2x256xbf16>, tensor<i32>, tensor<i32>) -> tensor<1x256xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x256xbf16>) -> tensor<256xbf16>
    return %1 : tensor<256xbf16>
  }
  func.func private @dynamic_index_in_dim_2(%arg0: tensor<2x1024x256xbf16>, %arg1: tensor<i32>) -> tensor<1024x256xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 1024, 256] : (tensor<2x1024x256xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1024x256xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x1024x256xbf16>) -> tensor<1024x256xbf16>
    return %1 : tensor<1024x256xbf16>
  }
  func.func private @dynamic_index_in_dim_3(%arg0: tensor<2x256x256xbf16>, %arg1: tensor<i32>) -> tensor<256x256xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 256, 256] : (tensor<2x256x256xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x256x256xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x256x256xbf16>) -> tensor<256x256xbf16>
    return %1 : tensor<256x256xbf16>
  }
  func.func private @dynamic_index_in_dim_4(%arg0: tensor<2x768xbf16>, %arg1: tensor<i32>) -> tensor<768xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 768] : (tensor<2x768xbf16>, tensor<i32>, tensor<i32>) -> tensor<1x768xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x768xbf16>) -> tensor<768xbf16>
    return %1 : tensor<768xbf16>
  }
  func.func private @dynamic_index_in_dim_5(%arg0: tensor<2x256x768xbf16>, %arg1: tensor<i32>) -> tensor<256x768xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 256, 768] : (tensor<2x256x768xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x256x768xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x256x768xbf16>) -> tensor<256x768xbf16>
    return %1 : tensor<256x768xbf16>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<2x4x256x256xbf16>, %arg1: tensor<4x256x256xbf16>, %arg2: tensor<i32>) -> tensor<2x4x256x256xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3] : (tensor<4x256x256xbf16>) -> tensor<1x4x256x256xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1 : (tensor<2x4x256x256xbf16>, tensor<1x4x256x256xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x4x256x256xbf16>
    return %1 : tensor<2x4x256x256xbf16>
  }
  func.func private @dynamic_update_index_in_dim_6(%arg0: tensor<2x4x256x1xbf16>, %arg1: tensor<4x256x1xbf16>, %arg2: tensor<i32>) -> tensor<2x4x256x1xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3] : (tensor<4x256x1xbf16>) -> tensor<1x4x256x1xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1 : (tensor<2x4x256x1xbf16>, tensor<1x4x256x1xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x4x256x1xbf16>
    return %1 : tensor<2x4x256x1xbf16>
  }
  func.func private @dynamic_update_index_in_dim_7(%arg0: tensor<2x1x1x256xbf16>, %arg1: tensor<1x1x256xbf16>, %arg2: tensor<i32>) -> tensor<2x1x1x256xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3] : (tensor<1x1x256xbf16>) -> tensor<1x1x1x256xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1 : (tensor<2x1x1x256xbf16>, tensor<1x1x1x256xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x1x1x256xbf16>
    return %1 : tensor<2x1x1x256xbf16>
  }
  func.func private @dynamic_update_index_in_dim_8(%arg0: tensor<2x4x256x4x64xbf16>, %arg1: tensor<4x256x4x64xbf16>, %arg2: tensor<i32>) -> tensor<2x4x256x4x64xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3, 4] : (tensor<4x256x4x64xbf16>) -> tensor<1x4x256x4x64xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1, %c_2 : (tensor<2x4x256x4x64xbf16>, tensor<1x4x256x4x64xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x4x256x4x64xbf16>
    return %1 : tensor<2x4x256x4x64xbf16>
  }
  func.func private @dynamic_update_index_in_dim_9(%arg0: tensor<2x4x4x256xf32>, %arg1: tensor<4x4x256xf32>, %arg2: tensor<i32>) -> tensor<2x4x4x256xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3] : (tensor<4x4x256xf32>) -> tensor<1x4x4x256xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1 : (tensor<2x4x4x256xf32>, tensor<1x4x4x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x4x4x256xf32>
    return %1 : tensor<2x4x4x256xf32>
  }
  func.func private @dynamic_update_index_in_dim_10(%arg0: tensor<2x4x256x1024xbf16>, %arg1: tensor<4x256x1024xbf16>, %arg2: tensor<i32>) -> tensor<2x4x256x1024xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3] : (tensor<4x256x1024xbf16>) -> tensor<1x4x256x1024xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1 : (tensor<2x4x256x1024xbf16>, tensor<1x4x256x1024xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x4x256x1024xbf16>
    return %1 : tensor<2x4x256x1024xbf16>
  }
  func.func private @log_softmax(%arg0: tensor<4x256x512xf32>) -> (tensor<4x256x512xf32>, tensor<4x256x512xf32>, tensor<4x256x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [2] : (tensor<4x256x512xf32>, tensor<f32>) -> tensor<4x256xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x256xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<4x256xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<4x256x1xf32>) -> tensor<4x256x512xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<4x256x512xf32>
    %6 = stablehlo.exponential %5 : tensor<4x256x512xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<4x256x512xf32>, tensor<f32>) -> tensor<4x256xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x1xf32>
    %9 = stablehlo.log %8 : tensor<4x256x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2] : (tensor<4x256x1xf32>) -> tensor<4x256x512xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<4x256x512xf32>
    return %11, %6, %8 : tensor<4x256x512xf32>, tensor<4x256x512xf32>, tensor<4x256x1xf32>
  }
  func.func private @take_along_axis(%arg0: tensor<4x256x512xf32>, %arg1: tensor<4x256x1xi32>) -> (tensor<4x256x1xf32>, tensor<4x256x1x1xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x256x1xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<4x256x1xi32>, tensor<4x256x1xi32>) -> tensor<4x256x1xi1>
    %c_0 = stablehlo.constant dense<512> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4x256x1xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<4x256x1xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<4x256x1xi1>, tensor<4x256x1xi32>
    %5 = stablehlo.reshape %4 : (tensor<4x256x1xi32>) -> tensor<4x256x1x1xi32>
    %c_1 = stablehlo.constant dense<511> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<4x256x1x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<4x256x1x1xi32>, tensor<4x256x1x1xi32>) -> tensor<4x256x1x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [3] : (tensor<1xi32>) -> tensor<1x1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x1xi32>) -> tensor<4x256x1x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<4x256x1x1xi32>, tensor<4x256x1x1xi32>) -> tensor<4x256x1x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<4x256x1x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [3] : (tensor<4x256x1x1xi1>, tensor<i1>) -> tensor<4x256x1xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<4x256x512xf32>, tensor<4x256x1x1xi32>) -> tensor<4x256x1xf32>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x256x1xf32>
    %15 = stablehlo.select %12, %13, %14 : tensor<4x256x1xi1>, tensor<4x256x1xf32>
    return %15, %5 : tensor<4x256x1xf32>, tensor<4x256x1x1xi32>
  }
  func.func private @take_along_axis_11(%arg0: tensor<4x256x1x1xi32>, %arg1: tensor<4x256x1xf32>) -> tensor<4x256x512xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x256x512xf32>
    %1 = "stablehlo.scatter"(%0, %arg0, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [2], input_batching_dims = [0, 1], scatter_indices_batching_dims = [0, 1], scatter_dims_to_operand_dims = [2], index_vector_dim = 3>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<4x256x512xf32>, tensor<4x256x1x1xi32>, tensor<4x256x1xf32>) -> tensor<4x256x512xf32>
    return %1 : tensor<4x256x512xf32>
  }
  func.func private @log_softmax_12(%arg0: tensor<4x256x512xf32>, %arg1: tensor<4x256x1xf32>, %arg2: tensor<4x256x512xf32>) -> tensor<4x256x512xf32> {
    %0 = stablehlo.negate %arg2 : tensor<4x256x512xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<4x256x512xf32>, tensor<f32>) -> tensor<4x256xf32>
    %2 = stablehlo.reshape %1 : (tensor<4x256xf32>) -> tensor<4x256x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<4x256x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [2] : (tensor<4x256x1xf32>, tensor<f32>) -> tensor<4x256xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<4x256xf32>) -> tensor<4x256x512xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<4x256x512xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<4x256x512xf32>
    return %7 : tensor<4x256x512xf32>
  }
  func.func private @dynamic_index_in_dim_13(%arg0: tensor<2x4x256x256xbf16>, %arg1: tensor<i32>) -> tensor<4x256x256xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, sizes = [1, 4, 256, 256] : (tensor<2x4x256x256xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x256x256xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x4x256x256xbf16>) -> tensor<4x256x256xbf16>
    return %1 : tensor<4x256x256xbf16>
  }
  func.func private @dynamic_index_in_dim_14(%arg0: tensor<2x4x256x1xbf16>, %arg1: tensor<i32>) -> tensor<4x256x1xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, sizes = [1, 4, 256, 1] : (tensor<2x4x256x1xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x256x1xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x4x256x1xbf16>) -> tensor<4x256x1xbf16>
    return %1 : tensor<4x256x1xbf16>
  }
  func.func private @dynamic_index_in_dim_15(%arg0: tensor<2x1x1x256xbf16>, %arg1: tensor<i32>) -> tensor<1x1x256xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, sizes = [1, 1, 1, 256] : (tensor<2x1x1x256xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x256xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x1x1x256xbf16>) -> tensor<1x1x256xbf16>
    return %1 : tensor<1x1x256xbf16>
  }
  func.func private @dynamic_index_in_dim_16(%arg0: tensor<2x4x256x4x64xbf16>, %arg1: tensor<i32>) -> tensor<4x256x4x64xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, %c_2, sizes = [1, 4, 256, 4, 64] : (tensor<2x4x256x4x64xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x256x4x64xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x4x256x4x64xbf16>) -> tensor<4x256x4x64xbf16>
    return %1 : tensor<4x256x4x64xbf16>
  }
  func.func private @dynamic_index_in_dim_17(%arg0: tensor<2x4x4x256xf32>, %arg1: tensor<i32>) -> tensor<4x4x256xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, sizes = [1, 4, 4, 256] : (tensor<2x4x4x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x4x256xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x4x256xf32>) -> tensor<4x4x256xf32>
    return %1 : tensor<4x4x256xf32>
  }
  func.func private @dynamic_index_in_dim_18(%arg0: tensor<2x4x256x1024xbf16>, %arg1: tensor<i32>) -> tensor<4x256x1024xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, sizes = [1, 4, 256, 1024] : (tensor<2x4x256x1024xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x256x1024xbf16>
    %1 = stablehlo.reshape %0 : (tensor<1x4x256x1024xbf16>) -> tensor<4x256x1024xbf16>
    return %1 : tensor<4x256x1024xbf16>
  }
  func.func private @dynamic_update_index_in_dim_19(%arg0: tensor<2x1024xbf16>, %arg1: tensor<1024xbf16>, %arg2: tensor<i32>) -> tensor<2x1024xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<1024xbf16>) -> tensor<1x1024xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<2x1024xbf16>, tensor<1x1024xbf16>, tensor<i32>, tensor<i32>) -> tensor<2x1024xbf16>
    return %1 : tensor<2x1024xbf16>
  }
  func.func private @dynamic_update_index_in_dim_20(%arg0: tensor<2x256x1024xbf16>, %arg1: tensor<256x1024xbf16>, %arg2: tensor<i32>) -> tensor<2x256x1024xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<256x1024xbf16>) -> tensor<1x256x1024xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<2x256x1024xbf16>, tensor<1x256x1024xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x256x1024xbf16>
    return %1 : tensor<2x256x1024xbf16>
  }
  func.func private @dynamic_update_index_in_dim_21(%arg0: tensor<2x256xbf16>, %arg1: tensor<256xbf16>, %arg2: tensor<i32>) -> tensor<2x256xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<256xbf16>) -> tensor<1x256xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<2x256xbf16>, tensor<1x256xbf16>, tensor<i32>, tensor<i32>) -> tensor<2x256xbf16>
    return %1 : tensor<2x256xbf16>
  }
  func.func private @dynamic_update_index_in_dim_22(%arg0: tensor<2x1024x256xbf16>, %arg1: tensor<1024x256xbf16>, %arg2: tensor<i32>) -> tensor<2x1024x256xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<1024x256xbf16>) -> tensor<1x1024x256xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<2x1024x256xbf16>, tensor<1x1024x256xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x1024x256xbf16>
    return %1 : tensor<2x1024x256xbf16>
  }
  func.func private @dynamic_update_index_in_dim_23(%arg0: tensor<2x256x256xbf16>, %arg1: tensor<256x256xbf16>, %arg2: tensor<i32>) -> tensor<2x256x256xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<256x256xbf16>) -> tensor<1x256x256xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<2x256x256xbf16>, tensor<1x256x256xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x256x256xbf16>
    return %1 : tensor<2x256x256xbf16>
  }
  func.func private @dynamic_update_index_in_dim_24(%arg0: tensor<2x768xbf16>, %arg1: tensor<768xbf16>, %arg2: tensor<i32>) -> tensor<2x768xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<768xbf16>) -> tensor<1x768xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<2x768xbf16>, tensor<1x768xbf16>, tensor<i32>, tensor<i32>) -> tensor<2x768xbf16>
    return %1 : tensor<2x768xbf16>
  }
  func.func private @dynamic_update_index_in_dim_25(%arg0: tensor<2x256x768xbf16>, %arg1: tensor<256x768xbf16>, %arg2: tensor<i32>) -> tensor<2x256x768xbf16> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<256x768xbf16>) -> tensor<1x256x768xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<2x256x768xbf16>, tensor<1x256x768xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x256x768xbf16>
    return %1 : tensor<2x256x768xbf16>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
}
