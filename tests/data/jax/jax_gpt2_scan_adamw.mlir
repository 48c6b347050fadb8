module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x512xf32>, %arg1: tensor<2x128x512xf32>, %arg2: tensor<2x128xf32>, %arg3: tensor<2x512x128xf32>, %arg4: tensor<2x128xf32>, %arg5: tensor<2x128xf32>, %arg6: tensor<2x128xf32>, %arg7: tensor<2x128xf32>, %arg8: tensor<2x128xf32>, %arg9: tensor<2x128x128xf32>, %arg10: tensor<2x384xf32>, %arg11: tensor<2x128x384xf32>, %arg12: tensor<128xf32>, %arg13: tensor<128xf32>, %arg14: tensor<64x128xf32>, %arg15: tensor<512x128xf32>, %arg16: tensor<i32>, %arg17: tensor<2x512xf32>, %arg18: tensor<2x128x512xf32>, %arg19: tensor<2x128xf32>, %arg20: tensor<2x512x128xf32>, %arg21: tensor<2x128xf32>, %arg22: tensor<2x128xf32>, %arg23: tensor<2x128xf32>, %arg24: tensor<2x128xf32>, %arg25: tensor<2x128xf32>, %arg26: tensor<2x128x128xf32>, %arg27: tensor<2x384xf32>, %arg28: tensor<2x128x384xf32>, %arg29: tensor<128xf32>, %arg30: tensor<128xf32>, %arg31: tensor<64x128xf32>, %arg32: tensor<512x128xf32>, %arg33: tensor<2x512xf32>, %arg34: tensor<2x128x512xf32>, %arg35: tensor<2x128xf32>, %arg36: tensor<2x512x128xf32>, %arg37: tensor<2x128xf32>, %arg38: tensor<2x128xf32>, %arg39: tensor<2x128xf32>, %arg40: tensor<2x128xf32>, %arg41: tensor<2x128xf32>, %arg42: tensor<2x128x128xf32>, %arg43: tensor<2x384xf32>, %arg44: tensor<2x128x384xf32>, %arg45: tensor<128xf32>, %arg46: tensor<128xf32>, %arg47: tensor<64x128xf32>, %arg48: tensor<512x128xf32>, %arg49: tensor<8x64xi32>, %arg50: tensor<8x64xi32>) -> (tensor<2x512xf32> {jax.result_info = "result[0]['layers']['fc1_b']"}, tensor<2x128x512xf32> {jax.result_info = "result[0]['layers']['fc1_w']"}, tensor<2x128xf32> {jax.result_info = "result[0]['layers']['fc2_b']"}, tensor<2x512x128xf32> {jax.result_info = "result[0]['layers']['fc2_w']"}, tensor<2x128xf32> {jax.result_info = "result[0]['layers']['ln1_b']"}, tensor<2x128xf32> {jax.result_info = "result[0]['layers']['ln1_g']"}, tensor<2x128xf32> {jax.result_info = "result[0]['layers']['ln2_b']"}, tensor<2x128xf32> {jax.result_info = "result[0]['layers']['ln2_g']"}, tensor<2x128xf32> {jax.result_info = "result[0]['layers']['proj_b']"}, tensor<2x128x128xf32> {jax.result_info = "result[0]['layers']['proj_w']"}, tensor<2x384xf32> {jax.result_info = "result[0]['layers']['qkv_b']"}, tensor<2x128x384xf32> {jax.result_info = "result[0]['layers']['qkv_w']"}, tensor<128xf32> {jax.result_info = "result[0]['lnf_b']"}, tensor<128xf32> {jax.result_info = "result[0]['lnf_g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['wpe']"}, tensor<512x128xf32> {jax.result_info = "result[0]['wte']"}, tensor<i32> {jax.result_info = "result[1][0].count"}, tensor<2x512xf32> {jax.result_info = "result[1][0].mu['layers']['fc1_b']"}, tensor<2x128x512xf32> {jax.result_info = "result[1][0].mu['layers']['fc1_w']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].mu['layers']['fc2_b']"}, tensor<2x512x128xf32> {jax.result_info = "result[1][0].mu['layers']['fc2_w']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].mu['layers']['ln1_b']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].mu['layers']['ln1_g']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].mu['layers']['ln2_b']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].mu['layers']['ln2_g']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].mu['layers']['proj_b']"}, tensor<2x128x128xf32> {jax.result_info = "result[1][0].mu['layers']['proj_w']"}, tensor<2x384xf32> {jax.result_info = "result[1][0].mu['layers']['qkv_b']"}, tensor<2x128x384xf32> {jax.result_info = "result[1][0].mu['layers']['qkv_w']"}, tensor<128xf32> {jax.result_info = "result[1][0].mu['lnf_b']"}, tensor<128xf32> {jax.result_info = "result[1][0].mu['lnf_g']"}, tensor<64x128xf32> {jax.result_info = "result[1][0].mu['wpe']"}, tensor<512x128xf32> {jax.result_info = "result[1][0].mu['wte']"}, tensor<2x512xf32> {jax.result_info = "result[1][0].nu['layers']['fc1_b']"}, tensor<2x128x512xf32> {jax.result_info = "result[1][0].nu['layers']['fc1_w']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].nu['layers']['fc2_b']"}, tensor<2x512x128xf32> {jax.result_info = "result[1][0].nu['layers']['fc2_w']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].nu['layers']['ln1_b']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].nu['layers']['ln1_g']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].nu['layers']['ln2_b']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].nu['layers']['ln2_g']"}, tensor<2x128xf32> {jax.result_info = "result[1][0].nu['layers']['proj_b']"}, tensor<2x128x128xf32> {jax.result_info = "result[1][0].nu['layers']['proj_w']"}, tensor<2x384xf32> {jax.result_info = "result[1][0].nu['layers']['qkv_b']"}, tensor<2x128x384xf32> {jax.result_info = "result[1][0].nu['layers']['qkv_w']"}, tensor<128xf32> {jax.result_info = "result[1][0].nu['lnf_b']"}, tensor<128xf32> {jax.result_info = "result[1][0].nu['lnf_g']"}, tensor<64x128xf32> {jax.result_info = "result[1][0].nu['wpe']"}, tensor<512x128xf32> {jax.result_info = "result[1][0].nu['wte']"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x64xi32>
    %1 = stablehlo.compare LT, %arg49, %0, SIGNED : (tensor<8x64xi32>, tensor<8x64xi32>) -> tensor<8x64xi1>
    %c_0 = stablehlo.constant dense<512> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<8x64xi32>
    %3 = stablehlo.add %arg49, %2 : tensor<8x64xi32>
    %4 = stablehlo.select %1, %3, %arg49 : tensor<8x64xi1>, tensor<8x64xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x64xi32>) -> tensor<8x64x1xi32>
    %6 = "stablehlo.gather"(%arg15, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 128>}> : (tensor<512x128xf32>, tensor<8x64x1xi32>) -> tensor<8x64x128xf32>
    %7 = stablehlo.broadcast_in_dim %arg14, dims = [1, 2] : (tensor<64x128xf32>) -> tensor<1x64x128xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<1x64x128xf32>) -> tensor<8x64x128xf32>
    %9 = stablehlo.add %6, %8 : tensor<8x64x128xf32>
    %cst = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %10 = stablehlo.sqrt %cst : tensor<f32>
    %11 = stablehlo.convert %10 : tensor<f32>
    %c_1 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i1>) -> tensor<64x64xi1>
    %13 = call @tril(%12) : (tensor<64x64xi1>) -> tensor<64x64xi1>
    %cst_2 = stablehlo.constant dense<-3.40282347E+38> : tensor<f32>
    %14:2 = call @_where(%13, %cst_2) : (tensor<64x64xi1>, tensor<f32>) -> (tensor<8x4x64x64xi1>, tensor<8x4x64x64xf32>)
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x8x64x128xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<2x8x64x1xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x8x64x1xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<2x8x64x128xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<2x1x1x128xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<2x8x64x128xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x8x64x128xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<2x8x64x4x32xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x8x64x4x32xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<2x8x4x64x64xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x8x4x64x1xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<2x8x4x64x1xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<2x8x4x64x64xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<2x8x64x4x32xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<2x8x64x128xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<2x8x64x128xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<2x8x64x1xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<2x8x64x1xf32>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<2x8x64x128xf32>
    %cst_22 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<2x1x1x128xf32>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %35 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<2x8x64x128xf32>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<2x8x64x128xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %37 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<2x8x64x512xf32>
    %cst_26 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<2x8x64x512xf32>
    %cst_27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %39 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<2x8x64x512xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<2x8x64x512xf32>
    %cst_29 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<2x8x64x512xf32>
    %c_30 = stablehlo.constant dense<0> : tensor<i32>
    %42:44 = stablehlo.while(%iterArg = %arg0, %iterArg_204 = %arg1, %iterArg_205 = %arg2, %iterArg_206 = %arg3, %iterArg_207 = %arg4, %iterArg_208 = %arg5, %iterArg_209 = %arg6, %iterArg_210 = %arg7, %iterArg_211 = %arg8, %iterArg_212 = %arg9, %iterArg_213 = %arg10, %iterArg_214 = %arg11, %iterArg_215 = %11, %iterArg_216 = %14#0, %iterArg_217 = %14#1, %iterArg_218 = %c_30, %iterArg_219 = %9, %iterArg_220 = %15, %iterArg_221 = %16, %iterArg_222 = %17, %iterArg_223 = %18, %iterArg_224 = %19, %iterArg_225 = %20, %iterArg_226 = %21, %iterArg_227 = %22, %iterArg_228 = %23, %iterArg_229 = %24, %iterArg_230 = %25, %iterArg_231 = %26, %iterArg_232 = %27, %iterArg_233 = %28, %iterArg_234 = %29, %iterArg_235 = %30, %iterArg_236 = %31, %iterArg_237 = %32, %iterArg_238 = %33, %iterArg_239 = %34, %iterArg_240 = %35, %iterArg_241 = %36, %iterArg_242 = %37, %iterArg_243 = %38, %iterArg_244 = %39, %iterArg_245 = %40, %iterArg_246 = %41) : tensor<2x512xf32>, tensor<2x128x512xf32>, tensor<2x128xf32>, tensor<2x512x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128x128xf32>, tensor<2x384xf32>, tensor<2x128x384xf32>, tensor<f32>, tensor<8x4x64x64xi1>, tensor<8x4x64x64xf32>, tensor<i32>, tensor<8x64x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x128xf32>, tensor<2x1x1x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x4x32xf32>, tensor<2x8x64x4x32xf32>, tensor<2x8x4x64x64xf32>, tensor<2x8x4x64x1xf32>, tensor<2x8x4x64x1xf32>, tensor<2x8x4x64x64xf32>, tensor<2x8x64x4x32xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x128xf32>, tensor<2x1x1x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>
    cond {
      %c_247 = stablehlo.constant dense<2> : tensor<i32>
      %582 = stablehlo.compare LT, %iterArg_218, %c_247, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %582 : tensor<i1>
    } do {
      %582 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_218) : (tensor<2x512xf32>, tensor<i32>) -> tensor<512xf32>
      %583 = func.call @dynamic_index_in_dim_0(%iterArg_204, %iterArg_218) : (tensor<2x128x512xf32>, tensor<i32>) -> tensor<128x512xf32>
      %584 = func.call @dynamic_index_in_dim_1(%iterArg_205, %iterArg_218) : (tensor<2x128xf32>, tensor<i32>) -> tensor<128xf32>
      %585 = func.call @dynamic_index_in_dim_2(%iterArg_206, %iterArg_218) : (tensor<2x512x128xf32>, tensor<i32>) -> tensor<512x128xf32>
      %586 = func.call @dynamic_index_in_dim_1(%iterArg_207, %iterArg_218) : (tensor<2x128xf32>, tensor<i32>) -> tensor<128xf32>
      %587 = func.call @dynamic_index_in_dim_1(%iterArg_208, %iterArg_218) : (tensor<2x128xf32>, tensor<i32>) -> tensor<128xf32>
      %588 = func.call @dynamic_index_in_dim_1(%iterArg_209, %iterArg_218) : (tensor<2x128xf32>, tensor<i32>) -> tensor<128xf32>
      %589 = func.call @dynamic_index_in_dim_1(%iterArg_210, %iterArg_218) : (tensor<2x128xf32>, tensor<i32>) -> tensor<128xf32>
      %590 = func.call @dynamic_index_in_dim_1(%iterArg_211, %iterArg_218) : (tensor<2x128xf32>, tensor<i32>) -> tensor<128xf32>
      %591 = func.call @dynamic_index_in_dim_3(%iterArg_212, %iterArg_218) : (tensor<2x128x128xf32>, tensor<i32>) -> tensor<128x128xf32>
      %592 = func.call @dynamic_index_in_dim_4(%iterArg_213, %iterArg_218) : (tensor<2x384xf32>, tensor<i32>) -> tensor<384xf32>
      %593 = func.call @dynamic_index_in_dim_5(%iterArg_214, %iterArg_218) : (tensor<2x128x384xf32>, tensor<i32>) -> tensor<128x384xf32>
      %cst_247 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %594 = stablehlo.reduce(%iterArg_219 init: %cst_247) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
      %595 = stablehlo.broadcast_in_dim %594, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
      %cst_248 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
      %596 = stablehlo.broadcast_in_dim %cst_248, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %597 = stablehlo.divide %595, %596 : tensor<8x64x1xf32>
      %598 = stablehlo.broadcast_in_dim %597, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
      %599 = stablehlo.subtract %iterArg_219, %598 : tensor<8x64x128xf32>
      %600 = stablehlo.multiply %599, %599 : tensor<8x64x128xf32>
      %cst_249 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %601 = stablehlo.broadcast_in_dim %cst_249, dims = [] : (tensor<f32>) -> tensor<8x64x128xf32>
      %602 = stablehlo.multiply %601, %599 : tensor<8x64x128xf32>
      %cst_250 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %603 = stablehlo.reduce(%600 init: %cst_250) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
      %604 = stablehlo.broadcast_in_dim %603, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
      %cst_251 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
      %605 = stablehlo.broadcast_in_dim %cst_251, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %606 = stablehlo.divide %604, %605 : tensor<8x64x1xf32>
      %607 = stablehlo.broadcast_in_dim %597, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
      %608 = stablehlo.subtract %iterArg_219, %607 : tensor<8x64x128xf32>
      %cst_252 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
      %609 = stablehlo.broadcast_in_dim %cst_252, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %610 = stablehlo.add %606, %609 : tensor<8x64x1xf32>
      %611 = stablehlo.rsqrt %610 : tensor<8x64x1xf32>
      %612 = stablehlo.divide %611, %610 : tensor<8x64x1xf32>
      %cst_253 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
      %613 = stablehlo.broadcast_in_dim %cst_253, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %614 = stablehlo.multiply %613, %612 : tensor<8x64x1xf32>
      %615 = stablehlo.broadcast_in_dim %611, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
      %616 = stablehlo.multiply %608, %615 : tensor<8x64x128xf32>
      %617 = stablehlo.broadcast_in_dim %587, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %618 = stablehlo.broadcast_in_dim %617, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
      %619 = stablehlo.multiply %616, %618 : tensor<8x64x128xf32>
      %620 = stablehlo.broadcast_in_dim %586, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %621 = stablehlo.broadcast_in_dim %620, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
      %622 = stablehlo.add %619, %621 : tensor<8x64x128xf32>
      %623 = stablehlo.dot_general %622, %593, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64x128xf32>, tensor<128x384xf32>) -> tensor<8x64x384xf32>
      %624 = stablehlo.broadcast_in_dim %592, dims = [2] : (tensor<384xf32>) -> tensor<1x1x384xf32>
      %625 = stablehlo.broadcast_in_dim %624, dims = [0, 1, 2] : (tensor<1x1x384xf32>) -> tensor<8x64x384xf32>
      %626 = stablehlo.add %623, %625 : tensor<8x64x384xf32>
      %627 = stablehlo.slice %626 [0:8, 0:64, 0:128] : (tensor<8x64x384xf32>) -> tensor<8x64x128xf32>
      %628 = stablehlo.slice %626 [0:8, 0:64, 128:256] : (tensor<8x64x384xf32>) -> tensor<8x64x128xf32>
      %629 = stablehlo.slice %626 [0:8, 0:64, 256:384] : (tensor<8x64x384xf32>) -> tensor<8x64x128xf32>
      %630 = stablehlo.reshape %627 : (tensor<8x64x128xf32>) -> tensor<8x64x4x32xf32>
      %631 = stablehlo.reshape %628 : (tensor<8x64x128xf32>) -> tensor<8x64x4x32xf32>
      %632 = stablehlo.reshape %629 : (tensor<8x64x128xf32>) -> tensor<8x64x4x32xf32>
      %633 = stablehlo.dot_general %630, %631, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x64x4x32xf32>, tensor<8x64x4x32xf32>) -> tensor<8x4x64x64xf32>
      %634 = stablehlo.broadcast_in_dim %iterArg_215, dims = [] : (tensor<f32>) -> tensor<8x4x64x64xf32>
      %635 = stablehlo.divide %633, %634 : tensor<8x4x64x64xf32>
      %636 = func.call @_where_6(%635, %iterArg_216, %iterArg_217) : (tensor<8x4x64x64xf32>, tensor<8x4x64x64xi1>, tensor<8x4x64x64xf32>) -> tensor<8x4x64x64xf32>
      %cst_254 = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %637 = stablehlo.reduce(%636 init: %cst_254) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x64x64xf32>, tensor<f32>) -> tensor<8x4x64xf32>
      %cst_255 = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %638 = stablehlo.broadcast_in_dim %cst_255, dims = [] : (tensor<f32>) -> tensor<8x4x64xf32>
      %639 = stablehlo.maximum %638, %637 : tensor<8x4x64xf32>
      %640 = stablehlo.broadcast_in_dim %639, dims = [0, 1, 2] : (tensor<8x4x64xf32>) -> tensor<8x4x64x1xf32>
      %641 = stablehlo.broadcast_in_dim %640, dims = [0, 1, 2, 3] : (tensor<8x4x64x1xf32>) -> tensor<8x4x64x64xf32>
      %642 = stablehlo.subtract %636, %641 : tensor<8x4x64x64xf32>
      %643 = stablehlo.exponential %642 : tensor<8x4x64x64xf32>
      %cst_256 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %644 = stablehlo.reduce(%643 init: %cst_256) applies stablehlo.add across dimensions = [3] : (tensor<8x4x64x64xf32>, tensor<f32>) -> tensor<8x4x64xf32>
      %645 = stablehlo.broadcast_in_dim %644, dims = [0, 1, 2] : (tensor<8x4x64xf32>) -> tensor<8x4x64x1xf32>
      %646 = stablehlo.broadcast_in_dim %645, dims = [0, 1, 2, 3] : (tensor<8x4x64x1xf32>) -> tensor<8x4x64x64xf32>
      %647 = stablehlo.divide %643, %646 : tensor<8x4x64x64xf32>
      %648 = stablehlo.multiply %645, %645 : tensor<8x4x64x1xf32>
      %cst_257 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %649 = stablehlo.broadcast_in_dim %cst_257, dims = [] : (tensor<f32>) -> tensor<8x4x64x1xf32>
      %650 = stablehlo.divide %649, %648 : tensor<8x4x64x1xf32>
      %651 = stablehlo.dot_general %632, %647, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x64x4x32xf32>, tensor<8x4x64x64xf32>) -> tensor<8x4x32x64xf32>
      %652 = stablehlo.transpose %651, dims = [0, 3, 1, 2] : (tensor<8x4x32x64xf32>) -> tensor<8x64x4x32xf32>
      %653 = stablehlo.reshape %652 : (tensor<8x64x4x32xf32>) -> tensor<8x64x128xf32>
      %654 = stablehlo.dot_general %653, %591, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64x128xf32>, tensor<128x128xf32>) -> tensor<8x64x128xf32>
      %655 = stablehlo.broadcast_in_dim %590, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %656 = stablehlo.broadcast_in_dim %655, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
      %657 = stablehlo.add %654, %656 : tensor<8x64x128xf32>
      %658 = stablehlo.add %iterArg_219, %657 : tensor<8x64x128xf32>
      %cst_258 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %659 = stablehlo.reduce(%658 init: %cst_258) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
      %660 = stablehlo.broadcast_in_dim %659, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
      %cst_259 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
      %661 = stablehlo.broadcast_in_dim %cst_259, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %662 = stablehlo.divide %660, %661 : tensor<8x64x1xf32>
      %663 = stablehlo.broadcast_in_dim %662, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
      %664 = stablehlo.subtract %658, %663 : tensor<8x64x128xf32>
      %665 = stablehlo.multiply %664, %664 : tensor<8x64x128xf32>
      %cst_260 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %666 = stablehlo.broadcast_in_dim %cst_260, dims = [] : (tensor<f32>) -> tensor<8x64x128xf32>
      %667 = stablehlo.multiply %666, %664 : tensor<8x64x128xf32>
      %cst_261 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %668 = stablehlo.reduce(%665 init: %cst_261) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
      %669 = stablehlo.broadcast_in_dim %668, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
      %cst_262 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
      %670 = stablehlo.broadcast_in_dim %cst_262, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %671 = stablehlo.divide %669, %670 : tensor<8x64x1xf32>
      %672 = stablehlo.broadcast_in_dim %662, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
      %673 = stablehlo.subtract %658, %672 : tensor<8x64x128xf32>
      %cst_263 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
      %674 = stablehlo.broadcast_in_dim %cst_263, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %675 = stablehlo.add %671, %674 : tensor<8x64x1xf32>
      %676 = stablehlo.rsqrt %675 : tensor<8x64x1xf32>
      %677 = stablehlo.divide %676, %675 : tensor<8x64x1xf32>
      %cst_264 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
      %678 = stablehlo.broadcast_in_dim %cst_264, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %679 = stablehlo.multiply %678, %677 : tensor<8x64x1xf32>
      %680 = stablehlo.broadcast_in_dim %676, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
      %681 = stablehlo.multiply %673, %680 : tensor<8x64x128xf32>
      %682 = stablehlo.broadcast_in_dim %589, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %683 = stablehlo.broadcast_in_dim %682, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
      %684 = stablehlo.multiply %681, %683 : tensor<8x64x128xf32>
      %685 = stablehlo.broadcast_in_dim %588, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %686 = stablehlo.broadcast_in_dim %685, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
      %687 = stablehlo.add %684, %686 : tensor<8x64x128xf32>
      %688 = stablehlo.dot_general %687, %583, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64x128xf32>, tensor<128x512xf32>) -> tensor<8x64x512xf32>
      %689 = stablehlo.broadcast_in_dim %582, dims = [2] : (tensor<512xf32>) -> tensor<1x1x512xf32>
      %690 = stablehlo.broadcast_in_dim %689, dims = [0, 1, 2] : (tensor<1x1x512xf32>) -> tensor<8x64x512xf32>
      %691 = stablehlo.add %688, %690 : tensor<8x64x512xf32>
      %692 = stablehlo.multiply %691, %691 : tensor<8x64x512xf32>
      %693 = stablehlo.multiply %692, %691 : tensor<8x64x512xf32>
      %694 = stablehlo.multiply %691, %691 : tensor<8x64x512xf32>
      %cst_265 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
      %695 = stablehlo.broadcast_in_dim %cst_265, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
      %696 = stablehlo.multiply %695, %694 : tensor<8x64x512xf32>
      %cst_266 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
      %697 = stablehlo.broadcast_in_dim %cst_266, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
      %698 = stablehlo.multiply %697, %693 : tensor<8x64x512xf32>
      %699 = stablehlo.add %691, %698 : tensor<8x64x512xf32>
      %cst_267 = stablehlo.constant dense<0.797884583> : tensor<f32>
      %700 = stablehlo.broadcast_in_dim %cst_267, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
      %701 = stablehlo.multiply %700, %699 : tensor<8x64x512xf32>
      %702 = stablehlo.tanh %701 : tensor<8x64x512xf32>
      %cst_268 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %703 = stablehlo.broadcast_in_dim %cst_268, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
      %704 = stablehlo.add %703, %702 : tensor<8x64x512xf32>
      %cst_269 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %705 = stablehlo.broadcast_in_dim %cst_269, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
      %706 = stablehlo.subtract %705, %702 : tensor<8x64x512xf32>
      %707 = stablehlo.multiply %704, %706 : tensor<8x64x512xf32>
      %cst_270 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %708 = stablehlo.broadcast_in_dim %cst_270, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
      %709 = stablehlo.add %708, %702 : tensor<8x64x512xf32>
      %cst_271 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
      %710 = stablehlo.broadcast_in_dim %cst_271, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
      %711 = stablehlo.multiply %710, %709 : tensor<8x64x512xf32>
      %712 = stablehlo.multiply %691, %711 : tensor<8x64x512xf32>
      %713 = stablehlo.dot_general %712, %585, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64x512xf32>, tensor<512x128xf32>) -> tensor<8x64x128xf32>
      %714 = stablehlo.broadcast_in_dim %584, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %715 = stablehlo.broadcast_in_dim %714, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
      %716 = stablehlo.add %713, %715 : tensor<8x64x128xf32>
      %717 = stablehlo.add %658, %716 : tensor<8x64x128xf32>
      %718 = func.call @dynamic_update_index_in_dim(%iterArg_220, %602, %iterArg_218) : (tensor<2x8x64x128xf32>, tensor<8x64x128xf32>, tensor<i32>) -> tensor<2x8x64x128xf32>
      %719 = func.call @dynamic_update_index_in_dim_7(%iterArg_221, %614, %iterArg_218) : (tensor<2x8x64x1xf32>, tensor<8x64x1xf32>, tensor<i32>) -> tensor<2x8x64x1xf32>
      %720 = func.call @dynamic_update_index_in_dim_7(%iterArg_222, %611, %iterArg_218) : (tensor<2x8x64x1xf32>, tensor<8x64x1xf32>, tensor<i32>) -> tensor<2x8x64x1xf32>
      %721 = func.call @dynamic_update_index_in_dim(%iterArg_223, %608, %iterArg_218) : (tensor<2x8x64x128xf32>, tensor<8x64x128xf32>, tensor<i32>) -> tensor<2x8x64x128xf32>
      %722 = func.call @dynamic_update_index_in_dim_8(%iterArg_224, %617, %iterArg_218) : (tensor<2x1x1x128xf32>, tensor<1x1x128xf32>, tensor<i32>) -> tensor<2x1x1x128xf32>
      %723 = func.call @dynamic_update_index_in_dim(%iterArg_225, %616, %iterArg_218) : (tensor<2x8x64x128xf32>, tensor<8x64x128xf32>, tensor<i32>) -> tensor<2x8x64x128xf32>
      %724 = func.call @dynamic_update_index_in_dim(%iterArg_226, %622, %iterArg_218) : (tensor<2x8x64x128xf32>, tensor<8x64x128xf32>, tensor<i32>) -> tensor<2x8x64x128xf32>
      %725 = func.call @dynamic_update_index_in_dim_9(%iterArg_227, %631, %iterArg_218) : (tensor<2x8x64x4x32xf32>, tensor<8x64x4x32xf32>, tensor<i32>) -> tensor<2x8x64x4x32xf32>
      %726 = func.call @dynamic_update_index_in_dim_9(%iterArg_228, %630, %iterArg_218) : (tensor<2x8x64x4x32xf32>, tensor<8x64x4x32xf32>, tensor<i32>) -> tensor<2x8x64x4x32xf32>
      %727 = func.call @dynamic_update_index_in_dim_10(%iterArg_229, %643, %iterArg_218) : (tensor<2x8x4x64x64xf32>, tensor<8x4x64x64xf32>, tensor<i32>) -> tensor<2x8x4x64x64xf32>
      %728 = func.call @dynamic_update_index_in_dim_11(%iterArg_230, %645, %iterArg_218) : (tensor<2x8x4x64x1xf32>, tensor<8x4x64x1xf32>, tensor<i32>) -> tensor<2x8x4x64x1xf32>
      %729 = func.call @dynamic_update_index_in_dim_11(%iterArg_231, %650, %iterArg_218) : (tensor<2x8x4x64x1xf32>, tensor<8x4x64x1xf32>, tensor<i32>) -> tensor<2x8x4x64x1xf32>
      %730 = func.call @dynamic_update_index_in_dim_10(%iterArg_232, %647, %iterArg_218) : (tensor<2x8x4x64x64xf32>, tensor<8x4x64x64xf32>, tensor<i32>) -> tensor<2x8x4x64x64xf32>
      %731 = func.call @dynamic_update_index_in_dim_9(%iterArg_233, %632, %iterArg_218) : (tensor<2x8x64x4x32xf32>, tensor<8x64x4x32xf32>, tensor<i32>) -> tensor<2x8x64x4x32xf32>
      %732 = func.call @dynamic_update_index_in_dim(%iterArg_234, %653, %iterArg_218) : (tensor<2x8x64x128xf32>, tensor<8x64x128xf32>, tensor<i32>) -> tensor<2x8x64x128xf32>
      %733 = func.call @dynamic_update_index_in_dim(%iterArg_235, %667, %iterArg_218) : (tensor<2x8x64x128xf32>, tensor<8x64x128xf32>, tensor<i32>) -> tensor<2x8x64x128xf32>
      %734 = func.call @dynamic_update_index_in_dim_7(%iterArg_236, %679, %iterArg_218) : (tensor<2x8x64x1xf32>, tensor<8x64x1xf32>, tensor<i32>) -> tensor<2x8x64x1xf32>
      %735 = func.call @dynamic_update_index_in_dim_7(%iterArg_237, %676, %iterArg_218) : (tensor<2x8x64x1xf32>, tensor<8x64x1xf32>, tensor<i32>) -> tensor<2x8x64x1xf32>
      %736 = func.call @dynamic_update_index_in_dim(%iterArg_238, %673, %iterArg_218) : (tensor<2x8x64x128xf32>, tensor<8x64x128xf32>, tensor<i32>) -> tensor<2x8x64x128xf32>
      %737 = func.call @dynamic_update_index_in_dim_8(%iterArg_239, %682, %iterArg_218) : (tensor<2x1x1x128xf32>, tensor<1x1x128xf32>, tensor<i32>) -> tensor<2x1x1x128xf32>
      %738 = func.call @dynamic_update_index_in_dim(%iterArg_240, %681, %iterArg_218) : (tensor<2x8x64x128xf32>, tensor<8x64x128xf32>, tensor<i32>) -> tensor<2x8x64x128xf32>
      %739 = func.call @dynamic_update_index_in_dim(%iterArg_241, %687, %iterArg_218) : (tensor<2x8x64x128xf32>, tensor<8x64x128xf32>, tensor<i32>) -> tensor<2x8x64x128xf32>
      %740 = func.call @dynamic_update_index_in_dim_12(%iterArg_242, %696, %iterArg_218) : (tensor<2x8x64x512xf32>, tensor<8x64x512xf32>, tensor<i32>) -> tensor<2x8x64x512xf32>
      %741 = func.call @dynamic_update_index_in_dim_12(%iterArg_243, %707, %iterArg_218) : (tensor<2x8x64x512xf32>, tensor<8x64x512xf32>, tensor<i32>) -> tensor<2x8x64x512xf32>
      %742 = func.call @dynamic_update_index_in_dim_12(%iterArg_244, %711, %iterArg_218) : (tensor<2x8x64x512xf32>, tensor<8x64x512xf32>, tensor<i32>) -> tensor<2x8x64x512xf32>
      %743 = func.call @dynamic_update_index_in_dim_12(%iterArg_245, %691, %iterArg_218) : (tensor<2x8x64x512xf32>, tensor<8x64x512xf32>, tensor<i32>) -> tensor<2x8x64x512xf32>
      %744 = func.call @dynamic_update_index_in_dim_12(%iterArg_246, %712, %iterArg_218) : (tensor<2x8x64x512xf32>, tensor<8x64x512xf32>, tensor<i32>) -> tensor<2x8x64x512xf32>
      %c_272 = stablehlo.constant dense<1> : tensor<i32>
      %745 = stablehlo.add %iterArg_218, %c_272 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_204, %iterArg_205, %iterArg_206, %iterArg_207, %iterArg_208, %iterArg_209, %iterArg_210, %iterArg_211, %iterArg_212, %iterArg_213, %iterArg_214, %iterArg_215, %iterArg_216, %iterArg_217, %745, %717, %718, %719, %720, %721, %722, %723, %724, %725, %726, %727, %728, %729, %730, %731, %732, %733, %734, %735, %736, %737, %738, %739, %740, %741, %742, %743, %744 : tensor<2x512xf32>, tensor<2x128x512xf32>, tensor<2x128xf32>, tensor<2x512x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128x128xf32>, tensor<2x384xf32>, tensor<2x128x384xf32>, tensor<f32>, tensor<8x4x64x64xi1>, tensor<8x4x64x64xf32>, tensor<i32>, tensor<8x64x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x128xf32>, tensor<2x1x1x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x4x32xf32>, tensor<2x8x64x4x32xf32>, tensor<2x8x4x64x64xf32>, tensor<2x8x4x64x1xf32>, tensor<2x8x4x64x1xf32>, tensor<2x8x4x64x64xf32>, tensor<2x8x64x4x32xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x128xf32>, tensor<2x1x1x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>
    }
    %cst_31 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %43 = stablehlo.reduce(%42#16 init: %cst_31) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
    %cst_32 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %45 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
    %46 = stablehlo.divide %44, %45 : tensor<8x64x1xf32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
    %48 = stablehlo.subtract %42#16, %47 : tensor<8x64x128xf32>
    %49 = stablehlo.multiply %48, %48 : tensor<8x64x128xf32>
    %cst_33 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %50 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<8x64x128xf32>
    %51 = stablehlo.multiply %50, %48 : tensor<8x64x128xf32>
    %cst_34 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %52 = stablehlo.reduce(%49 init: %cst_34) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
    %53 = stablehlo.broadcast_in_dim %52, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
    %cst_35 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %54 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
    %55 = stablehlo.divide %53, %54 : tensor<8x64x1xf32>
    %56 = stablehlo.broadcast_in_dim %46, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
    %57 = stablehlo.subtract %42#16, %56 : tensor<8x64x128xf32>
    %cst_36 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %58 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
    %59 = stablehlo.add %55, %58 : tensor<8x64x1xf32>
    %60 = stablehlo.rsqrt %59 : tensor<8x64x1xf32>
    %61 = stablehlo.divide %60, %59 : tensor<8x64x1xf32>
    %cst_37 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %62 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
    %63 = stablehlo.multiply %62, %61 : tensor<8x64x1xf32>
    %64 = stablehlo.broadcast_in_dim %60, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
    %65 = stablehlo.multiply %57, %64 : tensor<8x64x128xf32>
    %66 = stablehlo.broadcast_in_dim %arg13, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %67 = stablehlo.broadcast_in_dim %66, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
    %68 = stablehlo.multiply %65, %67 : tensor<8x64x128xf32>
    %69 = stablehlo.broadcast_in_dim %arg12, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %70 = stablehlo.broadcast_in_dim %69, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
    %71 = stablehlo.add %68, %70 : tensor<8x64x128xf32>
    %72 = stablehlo.transpose %arg15, dims = [1, 0] : (tensor<512x128xf32>) -> tensor<128x512xf32>
    %73 = stablehlo.dot_general %71, %72, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64x128xf32>, tensor<128x512xf32>) -> tensor<8x64x512xf32>
    %74:3 = call @log_softmax(%73) : (tensor<8x64x512xf32>) -> (tensor<8x64x512xf32>, tensor<8x64x512xf32>, tensor<8x64x1xf32>)
    %75 = stablehlo.broadcast_in_dim %arg50, dims = [0, 1] : (tensor<8x64xi32>) -> tensor<8x64x1xi32>
    %76:2 = call @take_along_axis(%74#0, %75) : (tensor<8x64x512xf32>, tensor<8x64x1xi32>) -> (tensor<8x64x1xf32>, tensor<8x64x1x1xi32>)
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %77 = stablehlo.reduce(%76#0 init: %cst_38) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x64x1xf32>, tensor<f32>) -> tensor<f32>
    %cst_39 = stablehlo.constant dense<5.120000e+02> : tensor<f32>
    %78 = stablehlo.divide %77, %cst_39 : tensor<f32>
    %79 = stablehlo.negate %78 : tensor<f32>
    %cst_40 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %80 = stablehlo.negate %cst_40 : tensor<f32>
    %cst_41 = stablehlo.constant dense<5.120000e+02> : tensor<f32>
    %81 = stablehlo.divide %80, %cst_41 : tensor<f32>
    %82 = stablehlo.broadcast_in_dim %81, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
    %83 = call @take_along_axis_13(%76#1, %82) : (tensor<8x64x1x1xi32>, tensor<8x64x1xf32>) -> tensor<8x64x512xf32>
    %84 = call @log_softmax_14(%74#1, %74#2, %83) : (tensor<8x64x512xf32>, tensor<8x64x1xf32>, tensor<8x64x512xf32>) -> tensor<8x64x512xf32>
    %85 = stablehlo.dot_general %84, %71, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x64x512xf32>, tensor<8x64x128xf32>) -> tensor<512x128xf32>
    %86 = stablehlo.transpose %85, dims = [1, 0] : (tensor<512x128xf32>) -> tensor<128x512xf32>
    %87 = stablehlo.dot_general %84, %72, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x64x512xf32>, tensor<128x512xf32>) -> tensor<8x64x128xf32>
    %88 = stablehlo.transpose %86, dims = [1, 0] : (tensor<128x512xf32>) -> tensor<512x128xf32>
    %cst_42 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %89 = stablehlo.reduce(%87 init: %cst_42) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %90 = stablehlo.reshape %89 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_43 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %91 = stablehlo.reduce(%90 init: %cst_43) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %92 = stablehlo.multiply %65, %87 : tensor<8x64x128xf32>
    %cst_44 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %93 = stablehlo.reduce(%92 init: %cst_44) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %94 = stablehlo.reshape %93 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %95 = stablehlo.broadcast_in_dim %66, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
    %96 = stablehlo.multiply %87, %95 : tensor<8x64x128xf32>
    %cst_45 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %97 = stablehlo.reduce(%94 init: %cst_45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %98 = stablehlo.multiply %57, %96 : tensor<8x64x128xf32>
    %cst_46 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %99 = stablehlo.reduce(%98 init: %cst_46) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
    %100 = stablehlo.reshape %99 : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
    %101 = stablehlo.broadcast_in_dim %60, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
    %102 = stablehlo.multiply %96, %101 : tensor<8x64x128xf32>
    %103 = stablehlo.multiply %100, %63 : tensor<8x64x1xf32>
    %104 = stablehlo.negate %102 : tensor<8x64x128xf32>
    %cst_47 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %105 = stablehlo.reduce(%104 init: %cst_47) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
    %106 = stablehlo.reshape %105 : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
    %cst_48 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %107 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
    %108 = stablehlo.divide %103, %107 : tensor<8x64x1xf32>
    %cst_49 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %109 = stablehlo.reduce(%108 init: %cst_49) applies stablehlo.add across dimensions = [2] : (tensor<8x64x1xf32>, tensor<f32>) -> tensor<8x64xf32>
    %110 = stablehlo.broadcast_in_dim %109, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x128xf32>
    %111 = stablehlo.multiply %110, %51 : tensor<8x64x128xf32>
    %112 = stablehlo.negate %111 : tensor<8x64x128xf32>
    %cst_50 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %113 = stablehlo.reduce(%112 init: %cst_50) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
    %114 = stablehlo.reshape %113 : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
    %115 = stablehlo.add %102, %111 : tensor<8x64x128xf32>
    %116 = stablehlo.add %106, %114 : tensor<8x64x1xf32>
    %cst_51 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %117 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
    %118 = stablehlo.divide %116, %117 : tensor<8x64x1xf32>
    %cst_52 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %119 = stablehlo.reduce(%118 init: %cst_52) applies stablehlo.add across dimensions = [2] : (tensor<8x64x1xf32>, tensor<f32>) -> tensor<8x64xf32>
    %120 = stablehlo.broadcast_in_dim %119, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x128xf32>
    %121 = stablehlo.add %115, %120 : tensor<8x64x128xf32>
    %cst_53 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %122 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %cst_54 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %123 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %cst_55 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %124 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %cst_56 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %125 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %cst_57 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %126 = stablehlo.broadcast_in_dim %cst_57, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %cst_58 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %127 = stablehlo.broadcast_in_dim %cst_58, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %cst_59 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %128 = stablehlo.broadcast_in_dim %cst_59, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %cst_60 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %129 = stablehlo.broadcast_in_dim %cst_60, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %cst_61 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %130 = stablehlo.broadcast_in_dim %cst_61, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %cst_62 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %131 = stablehlo.broadcast_in_dim %cst_62, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %cst_63 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %132 = stablehlo.broadcast_in_dim %cst_63, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %cst_64 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %133 = stablehlo.broadcast_in_dim %cst_64, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %c_65 = stablehlo.constant dense<0> : tensor<i32>
    %134:47 = stablehlo.while(%iterArg = %42#17, %iterArg_204 = %42#18, %iterArg_205 = %42#19, %iterArg_206 = %42#20, %iterArg_207 = %42#21, %iterArg_208 = %42#22, %iterArg_209 = %arg11, %iterArg_210 = %42#23, %iterArg_211 = %42#24, %iterArg_212 = %42#25, %iterArg_213 = %42#26, %iterArg_214 = %42#27, %iterArg_215 = %42#28, %iterArg_216 = %42#29, %iterArg_217 = %42#30, %iterArg_218 = %arg9, %iterArg_219 = %42#31, %iterArg_220 = %42#32, %iterArg_221 = %42#33, %iterArg_222 = %42#34, %iterArg_223 = %42#35, %iterArg_224 = %42#36, %iterArg_225 = %42#37, %iterArg_226 = %arg1, %iterArg_227 = %42#38, %iterArg_228 = %42#39, %iterArg_229 = %42#40, %iterArg_230 = %42#41, %iterArg_231 = %42#42, %iterArg_232 = %arg3, %iterArg_233 = %42#43, %iterArg_234 = %11, %iterArg_235 = %14#0, %iterArg_236 = %c_65, %iterArg_237 = %121, %iterArg_238 = %122, %iterArg_239 = %123, %iterArg_240 = %124, %iterArg_241 = %125, %iterArg_242 = %126, %iterArg_243 = %127, %iterArg_244 = %128, %iterArg_245 = %129, %iterArg_246 = %130, %iterArg_247 = %131, %iterArg_248 = %132, %iterArg_249 = %133) : tensor<2x8x64x128xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x128xf32>, tensor<2x1x1x128xf32>, tensor<2x8x64x128xf32>, tensor<2x128x384xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x4x32xf32>, tensor<2x8x64x4x32xf32>, tensor<2x8x4x64x64xf32>, tensor<2x8x4x64x1xf32>, tensor<2x8x4x64x1xf32>, tensor<2x8x4x64x64xf32>, tensor<2x8x64x4x32xf32>, tensor<2x128x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x128xf32>, tensor<2x1x1x128xf32>, tensor<2x8x64x128xf32>, tensor<2x128x512xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x512x128xf32>, tensor<2x8x64x512xf32>, tensor<f32>, tensor<8x4x64x64xi1>, tensor<i32>, tensor<8x64x128xf32>, tensor<2x512xf32>, tensor<2x128x512xf32>, tensor<2x128xf32>, tensor<2x512x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128x128xf32>, tensor<2x384xf32>, tensor<2x128x384xf32>
    cond {
      %c_250 = stablehlo.constant dense<2> : tensor<i32>
      %582 = stablehlo.compare LT, %iterArg_236, %c_250, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %582 : tensor<i1>
    } do {
      %c_250 = stablehlo.constant dense<2> : tensor<i32>
      %582 = stablehlo.subtract %c_250, %iterArg_236 : tensor<i32>
      %c_251 = stablehlo.constant dense<1> : tensor<i32>
      %583 = stablehlo.subtract %582, %c_251 : tensor<i32>
      %584 = func.call @dynamic_index_in_dim_15(%iterArg, %583) : (tensor<2x8x64x128xf32>, tensor<i32>) -> tensor<8x64x128xf32>
      %585 = func.call @dynamic_index_in_dim_16(%iterArg_204, %583) : (tensor<2x8x64x1xf32>, tensor<i32>) -> tensor<8x64x1xf32>
      %586 = func.call @dynamic_index_in_dim_16(%iterArg_205, %583) : (tensor<2x8x64x1xf32>, tensor<i32>) -> tensor<8x64x1xf32>
      %587 = func.call @dynamic_index_in_dim_15(%iterArg_206, %583) : (tensor<2x8x64x128xf32>, tensor<i32>) -> tensor<8x64x128xf32>
      %588 = func.call @dynamic_index_in_dim_17(%iterArg_207, %583) : (tensor<2x1x1x128xf32>, tensor<i32>) -> tensor<1x1x128xf32>
      %589 = func.call @dynamic_index_in_dim_15(%iterArg_208, %583) : (tensor<2x8x64x128xf32>, tensor<i32>) -> tensor<8x64x128xf32>
      %590 = func.call @dynamic_index_in_dim_5(%iterArg_209, %583) : (tensor<2x128x384xf32>, tensor<i32>) -> tensor<128x384xf32>
      %591 = func.call @dynamic_index_in_dim_15(%iterArg_210, %583) : (tensor<2x8x64x128xf32>, tensor<i32>) -> tensor<8x64x128xf32>
      %592 = func.call @dynamic_index_in_dim_18(%iterArg_211, %583) : (tensor<2x8x64x4x32xf32>, tensor<i32>) -> tensor<8x64x4x32xf32>
      %593 = func.call @dynamic_index_in_dim_18(%iterArg_212, %583) : (tensor<2x8x64x4x32xf32>, tensor<i32>) -> tensor<8x64x4x32xf32>
      %594 = func.call @dynamic_index_in_dim_19(%iterArg_213, %583) : (tensor<2x8x4x64x64xf32>, tensor<i32>) -> tensor<8x4x64x64xf32>
      %595 = func.call @dynamic_index_in_dim_20(%iterArg_214, %583) : (tensor<2x8x4x64x1xf32>, tensor<i32>) -> tensor<8x4x64x1xf32>
      %596 = func.call @dynamic_index_in_dim_20(%iterArg_215, %583) : (tensor<2x8x4x64x1xf32>, tensor<i32>) -> tensor<8x4x64x1xf32>
      %597 = func.call @dynamic_index_in_dim_19(%iterArg_216, %583) : (tensor<2x8x4x64x64xf32>, tensor<i32>) -> tensor<8x4x64x64xf32>
      %598 = func.call @dynamic_index_in_dim_18(%iterArg_217, %583) : (tensor<2x8x64x4x32xf32>, tensor<i32>) -> tensor<8x64x4x32xf32>
      %599 = func.call @dynamic_index_in_dim_3(%iterArg_218, %583) : (tensor<2x128x128xf32>, tensor<i32>) -> tensor<128x128xf32>
      %600 = func.call @dynamic_index_in_dim_15(%iterArg_219, %583) : (tensor<2x8x64x128xf32>, tensor<i32>) -> tensor<8x64x128xf32>
      %601 = func.call @dynamic_index_in_dim_15(%iterArg_220, %583) : (tensor<2x8x64x128xf32>, tensor<i32>) -> tensor<8x64x128xf32>
      %602 = func.call @dynamic_index_in_dim_16(%iterArg_221, %583) : (tensor<2x8x64x1xf32>, tensor<i32>) -> tensor<8x64x1xf32>
      %603 = func.call @dynamic_index_in_dim_16(%iterArg_222, %583) : (tensor<2x8x64x1xf32>, tensor<i32>) -> tensor<8x64x1xf32>
      %604 = func.call @dynamic_index_in_dim_15(%iterArg_223, %583) : (tensor<2x8x64x128xf32>, tensor<i32>) -> tensor<8x64x128xf32>
      %605 = func.call @dynamic_index_in_dim_17(%iterArg_224, %583) : (tensor<2x1x1x128xf32>, tensor<i32>) -> tensor<1x1x128xf32>
      %606 = func.call @dynamic_index_in_dim_15(%iterArg_225, %583) : (tensor<2x8x64x128xf32>, tensor<i32>) -> tensor<8x64x128xf32>
      %607 = func.call @dynamic_index_in_dim_0(%iterArg_226, %583) : (tensor<2x128x512xf32>, tensor<i32>) -> tensor<128x512xf32>
      %608 = func.call @dynamic_index_in_dim_15(%iterArg_227, %583) : (tensor<2x8x64x128xf32>, tensor<i32>) -> tensor<8x64x128xf32>
      %609 = func.call @dynamic_index_in_dim_21(%iterArg_228, %583) : (tensor<2x8x64x512xf32>, tensor<i32>) -> tensor<8x64x512xf32>
      %610 = func.call @dynamic_index_in_dim_21(%iterArg_229, %583) : (tensor<2x8x64x512xf32>, tensor<i32>) -> tensor<8x64x512xf32>
      %611 = func.call @dynamic_index_in_dim_21(%iterArg_230, %583) : (tensor<2x8x64x512xf32>, tensor<i32>) -> tensor<8x64x512xf32>
      %612 = func.call @dynamic_index_in_dim_21(%iterArg_231, %583) : (tensor<2x8x64x512xf32>, tensor<i32>) -> tensor<8x64x512xf32>
      %613 = func.call @dynamic_index_in_dim_2(%iterArg_232, %583) : (tensor<2x512x128xf32>, tensor<i32>) -> tensor<512x128xf32>
      %614 = func.call @dynamic_index_in_dim_21(%iterArg_233, %583) : (tensor<2x8x64x512xf32>, tensor<i32>) -> tensor<8x64x512xf32>
      %cst_252 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %615 = stablehlo.reduce(%iterArg_237 init: %cst_252) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<128xf32>
      %616 = stablehlo.reshape %615 : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %cst_253 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %617 = stablehlo.reduce(%616 init: %cst_253) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
      %618 = stablehlo.dot_general %iterArg_237, %614, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x64x128xf32>, tensor<8x64x512xf32>) -> tensor<128x512xf32>
      %619 = stablehlo.transpose %618, dims = [1, 0] : (tensor<128x512xf32>) -> tensor<512x128xf32>
      %620 = stablehlo.dot_general %iterArg_237, %613, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x64x128xf32>, tensor<512x128xf32>) -> tensor<8x64x512xf32>
      %621 = stablehlo.multiply %612, %620 : tensor<8x64x512xf32>
      %622 = stablehlo.multiply %620, %611 : tensor<8x64x512xf32>
      %cst_254 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
      %623 = stablehlo.broadcast_in_dim %cst_254, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
      %624 = stablehlo.multiply %623, %621 : tensor<8x64x512xf32>
      %625 = stablehlo.multiply %624, %610 : tensor<8x64x512xf32>
      %cst_255 = stablehlo.constant dense<0.797884583> : tensor<f32>
      %626 = stablehlo.broadcast_in_dim %cst_255, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
      %627 = stablehlo.multiply %626, %625 : tensor<8x64x512xf32>
      %628 = stablehlo.add %622, %627 : tensor<8x64x512xf32>
      %cst_256 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
      %629 = stablehlo.broadcast_in_dim %cst_256, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
      %630 = stablehlo.multiply %629, %627 : tensor<8x64x512xf32>
      %631 = stablehlo.multiply %630, %609 : tensor<8x64x512xf32>
      %632 = stablehlo.add %628, %631 : tensor<8x64x512xf32>
      %cst_257 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %633 = stablehlo.reduce(%632 init: %cst_257) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64x512xf32>, tensor<f32>) -> tensor<512xf32>
      %634 = stablehlo.reshape %633 : (tensor<512xf32>) -> tensor<1x1x512xf32>
      %cst_258 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %635 = stablehlo.reduce(%634 init: %cst_258) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x512xf32>, tensor<f32>) -> tensor<512xf32>
      %636 = stablehlo.dot_general %632, %608, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x64x512xf32>, tensor<8x64x128xf32>) -> tensor<512x128xf32>
      %637 = stablehlo.transpose %636, dims = [1, 0] : (tensor<512x128xf32>) -> tensor<128x512xf32>
      %638 = stablehlo.dot_general %632, %607, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x64x512xf32>, tensor<128x512xf32>) -> tensor<8x64x128xf32>
      %cst_259 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %639 = stablehlo.reduce(%638 init: %cst_259) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<128xf32>
      %640 = stablehlo.reshape %639 : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %cst_260 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %641 = stablehlo.reduce(%640 init: %cst_260) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
      %642 = stablehlo.multiply %606, %638 : tensor<8x64x128xf32>
      %cst_261 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %643 = stablehlo.reduce(%642 init: %cst_261) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<128xf32>
      %644 = stablehlo.reshape %643 : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %645 = stablehlo.broadcast_in_dim %605, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
      %646 = stablehlo.multiply %638, %645 : tensor<8x64x128xf32>
      %cst_262 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %647 = stablehlo.reduce(%644 init: %cst_262) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
      %648 = stablehlo.multiply %604, %646 : tensor<8x64x128xf32>
      %cst_263 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %649 = stablehlo.reduce(%648 init: %cst_263) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
      %650 = stablehlo.reshape %649 : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
      %651 = stablehlo.broadcast_in_dim %603, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
      %652 = stablehlo.multiply %646, %651 : tensor<8x64x128xf32>
      %653 = stablehlo.multiply %650, %602 : tensor<8x64x1xf32>
      %654 = stablehlo.negate %652 : tensor<8x64x128xf32>
      %cst_264 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %655 = stablehlo.reduce(%654 init: %cst_264) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
      %656 = stablehlo.reshape %655 : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
      %657 = stablehlo.add %iterArg_237, %652 : tensor<8x64x128xf32>
      %cst_265 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
      %658 = stablehlo.broadcast_in_dim %cst_265, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %659 = stablehlo.divide %653, %658 : tensor<8x64x1xf32>
      %cst_266 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %660 = stablehlo.reduce(%659 init: %cst_266) applies stablehlo.add across dimensions = [2] : (tensor<8x64x1xf32>, tensor<f32>) -> tensor<8x64xf32>
      %661 = stablehlo.broadcast_in_dim %660, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x128xf32>
      %662 = stablehlo.multiply %661, %601 : tensor<8x64x128xf32>
      %663 = stablehlo.negate %662 : tensor<8x64x128xf32>
      %cst_267 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %664 = stablehlo.reduce(%663 init: %cst_267) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
      %665 = stablehlo.reshape %664 : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
      %666 = stablehlo.add %657, %662 : tensor<8x64x128xf32>
      %667 = stablehlo.add %656, %665 : tensor<8x64x1xf32>
      %cst_268 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
      %668 = stablehlo.broadcast_in_dim %cst_268, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %669 = stablehlo.divide %667, %668 : tensor<8x64x1xf32>
      %cst_269 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %670 = stablehlo.reduce(%669 init: %cst_269) applies stablehlo.add across dimensions = [2] : (tensor<8x64x1xf32>, tensor<f32>) -> tensor<8x64xf32>
      %671 = stablehlo.broadcast_in_dim %670, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x128xf32>
      %672 = stablehlo.add %666, %671 : tensor<8x64x128xf32>
      %cst_270 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %673 = stablehlo.reduce(%672 init: %cst_270) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<128xf32>
      %674 = stablehlo.reshape %673 : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %cst_271 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %675 = stablehlo.reduce(%674 init: %cst_271) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
      %676 = stablehlo.dot_general %672, %600, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x64x128xf32>, tensor<8x64x128xf32>) -> tensor<128x128xf32>
      %677 = stablehlo.transpose %676, dims = [1, 0] : (tensor<128x128xf32>) -> tensor<128x128xf32>
      %678 = stablehlo.dot_general %672, %599, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x64x128xf32>, tensor<128x128xf32>) -> tensor<8x64x128xf32>
      %679 = stablehlo.reshape %678 : (tensor<8x64x128xf32>) -> tensor<8x64x4x32xf32>
      %680 = stablehlo.transpose %679, dims = [0, 2, 3, 1] : (tensor<8x64x4x32xf32>) -> tensor<8x4x32x64xf32>
      %681 = stablehlo.dot_general %680, %598, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x4x32x64xf32>, tensor<8x64x4x32xf32>) -> tensor<8x4x64x64xf32>
      %682 = stablehlo.dot_general %680, %597, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x4x32x64xf32>, tensor<8x4x64x64xf32>) -> tensor<8x4x32x64xf32>
      %683 = stablehlo.transpose %682, dims = [0, 3, 1, 2] : (tensor<8x4x32x64xf32>) -> tensor<8x64x4x32xf32>
      %684 = stablehlo.broadcast_in_dim %596, dims = [0, 1, 2, 3] : (tensor<8x4x64x1xf32>) -> tensor<8x4x64x64xf32>
      %685 = stablehlo.multiply %681, %684 : tensor<8x4x64x64xf32>
      %686 = stablehlo.multiply %685, %594 : tensor<8x4x64x64xf32>
      %cst_272 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %687 = stablehlo.reduce(%686 init: %cst_272) applies stablehlo.add across dimensions = [3] : (tensor<8x4x64x64xf32>, tensor<f32>) -> tensor<8x4x64xf32>
      %688 = stablehlo.reshape %687 : (tensor<8x4x64xf32>) -> tensor<8x4x64x1xf32>
      %689 = stablehlo.negate %688 : tensor<8x4x64x1xf32>
      %690 = stablehlo.broadcast_in_dim %595, dims = [0, 1, 2, 3] : (tensor<8x4x64x1xf32>) -> tensor<8x4x64x64xf32>
      %691 = stablehlo.divide %681, %690 : tensor<8x4x64x64xf32>
      %cst_273 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %692 = stablehlo.reduce(%689 init: %cst_273) applies stablehlo.add across dimensions = [3] : (tensor<8x4x64x1xf32>, tensor<f32>) -> tensor<8x4x64xf32>
      %693 = stablehlo.broadcast_in_dim %692, dims = [0, 1, 2] : (tensor<8x4x64xf32>) -> tensor<8x4x64x64xf32>
      %694 = stablehlo.add %691, %693 : tensor<8x4x64x64xf32>
      %695 = stablehlo.multiply %694, %594 : tensor<8x4x64x64xf32>
      %696 = func.call @_where_22(%iterArg_235, %695) : (tensor<8x4x64x64xi1>, tensor<8x4x64x64xf32>) -> tensor<8x4x64x64xf32>
      %697 = stablehlo.broadcast_in_dim %iterArg_234, dims = [] : (tensor<f32>) -> tensor<8x4x64x64xf32>
      %698 = stablehlo.divide %696, %697 : tensor<8x4x64x64xf32>
      %699 = stablehlo.dot_general %698, %593, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x64x64xf32>, tensor<8x64x4x32xf32>) -> tensor<8x4x64x32xf32>
      %700 = stablehlo.transpose %699, dims = [0, 2, 1, 3] : (tensor<8x4x64x32xf32>) -> tensor<8x64x4x32xf32>
      %701 = stablehlo.dot_general %698, %592, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x64x64xf32>, tensor<8x64x4x32xf32>) -> tensor<8x4x64x32xf32>
      %702 = stablehlo.transpose %701, dims = [0, 2, 1, 3] : (tensor<8x4x64x32xf32>) -> tensor<8x64x4x32xf32>
      %703 = stablehlo.reshape %683 : (tensor<8x64x4x32xf32>) -> tensor<8x64x128xf32>
      %704 = stablehlo.reshape %700 : (tensor<8x64x4x32xf32>) -> tensor<8x64x128xf32>
      %705 = stablehlo.reshape %702 : (tensor<8x64x4x32xf32>) -> tensor<8x64x128xf32>
      %706 = stablehlo.concatenate %705, %704, %703, dim = 2 : (tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>) -> tensor<8x64x384xf32>
      %cst_274 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %707 = stablehlo.reduce(%706 init: %cst_274) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64x384xf32>, tensor<f32>) -> tensor<384xf32>
      %708 = stablehlo.reshape %707 : (tensor<384xf32>) -> tensor<1x1x384xf32>
      %cst_275 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %709 = stablehlo.reduce(%708 init: %cst_275) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x384xf32>, tensor<f32>) -> tensor<384xf32>
      %710 = stablehlo.dot_general %706, %591, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x64x384xf32>, tensor<8x64x128xf32>) -> tensor<384x128xf32>
      %711 = stablehlo.transpose %710, dims = [1, 0] : (tensor<384x128xf32>) -> tensor<128x384xf32>
      %712 = stablehlo.dot_general %706, %590, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x64x384xf32>, tensor<128x384xf32>) -> tensor<8x64x128xf32>
      %cst_276 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %713 = stablehlo.reduce(%712 init: %cst_276) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<128xf32>
      %714 = stablehlo.reshape %713 : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %cst_277 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %715 = stablehlo.reduce(%714 init: %cst_277) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
      %716 = stablehlo.multiply %589, %712 : tensor<8x64x128xf32>
      %cst_278 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %717 = stablehlo.reduce(%716 init: %cst_278) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<128xf32>
      %718 = stablehlo.reshape %717 : (tensor<128xf32>) -> tensor<1x1x128xf32>
      %719 = stablehlo.broadcast_in_dim %588, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x64x128xf32>
      %720 = stablehlo.multiply %712, %719 : tensor<8x64x128xf32>
      %cst_279 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %721 = stablehlo.reduce(%718 init: %cst_279) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
      %722 = stablehlo.multiply %587, %720 : tensor<8x64x128xf32>
      %cst_280 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %723 = stablehlo.reduce(%722 init: %cst_280) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
      %724 = stablehlo.reshape %723 : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
      %725 = stablehlo.broadcast_in_dim %586, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x128xf32>
      %726 = stablehlo.multiply %720, %725 : tensor<8x64x128xf32>
      %727 = stablehlo.multiply %724, %585 : tensor<8x64x1xf32>
      %728 = stablehlo.negate %726 : tensor<8x64x128xf32>
      %cst_281 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %729 = stablehlo.reduce(%728 init: %cst_281) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
      %730 = stablehlo.reshape %729 : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
      %731 = stablehlo.add %672, %726 : tensor<8x64x128xf32>
      %cst_282 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
      %732 = stablehlo.broadcast_in_dim %cst_282, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %733 = stablehlo.divide %727, %732 : tensor<8x64x1xf32>
      %cst_283 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %734 = stablehlo.reduce(%733 init: %cst_283) applies stablehlo.add across dimensions = [2] : (tensor<8x64x1xf32>, tensor<f32>) -> tensor<8x64xf32>
      %735 = stablehlo.broadcast_in_dim %734, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x128xf32>
      %736 = stablehlo.multiply %735, %584 : tensor<8x64x128xf32>
      %737 = stablehlo.negate %736 : tensor<8x64x128xf32>
      %cst_284 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %738 = stablehlo.reduce(%737 init: %cst_284) applies stablehlo.add across dimensions = [2] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<8x64xf32>
      %739 = stablehlo.reshape %738 : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
      %740 = stablehlo.add %731, %736 : tensor<8x64x128xf32>
      %741 = stablehlo.add %730, %739 : tensor<8x64x1xf32>
      %cst_285 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
      %742 = stablehlo.broadcast_in_dim %cst_285, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
      %743 = stablehlo.divide %741, %742 : tensor<8x64x1xf32>
      %cst_286 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %744 = stablehlo.reduce(%743 init: %cst_286) applies stablehlo.add across dimensions = [2] : (tensor<8x64x1xf32>, tensor<f32>) -> tensor<8x64xf32>
      %745 = stablehlo.broadcast_in_dim %744, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x128xf32>
      %746 = stablehlo.add %740, %745 : tensor<8x64x128xf32>
      %747 = func.call @dynamic_update_index_in_dim_23(%iterArg_238, %635, %583) : (tensor<2x512xf32>, tensor<512xf32>, tensor<i32>) -> tensor<2x512xf32>
      %748 = func.call @dynamic_update_index_in_dim_24(%iterArg_239, %637, %583) : (tensor<2x128x512xf32>, tensor<128x512xf32>, tensor<i32>) -> tensor<2x128x512xf32>
      %749 = func.call @dynamic_update_index_in_dim_25(%iterArg_240, %617, %583) : (tensor<2x128xf32>, tensor<128xf32>, tensor<i32>) -> tensor<2x128xf32>
      %750 = func.call @dynamic_update_index_in_dim_26(%iterArg_241, %619, %583) : (tensor<2x512x128xf32>, tensor<512x128xf32>, tensor<i32>) -> tensor<2x512x128xf32>
      %751 = func.call @dynamic_update_index_in_dim_25(%iterArg_242, %715, %583) : (tensor<2x128xf32>, tensor<128xf32>, tensor<i32>) -> tensor<2x128xf32>
      %752 = func.call @dynamic_update_index_in_dim_25(%iterArg_243, %721, %583) : (tensor<2x128xf32>, tensor<128xf32>, tensor<i32>) -> tensor<2x128xf32>
      %753 = func.call @dynamic_update_index_in_dim_25(%iterArg_244, %641, %583) : (tensor<2x128xf32>, tensor<128xf32>, tensor<i32>) -> tensor<2x128xf32>
      %754 = func.call @dynamic_update_index_in_dim_25(%iterArg_245, %647, %583) : (tensor<2x128xf32>, tensor<128xf32>, tensor<i32>) -> tensor<2x128xf32>
      %755 = func.call @dynamic_update_index_in_dim_25(%iterArg_246, %675, %583) : (tensor<2x128xf32>, tensor<128xf32>, tensor<i32>) -> tensor<2x128xf32>
      %756 = func.call @dynamic_update_index_in_dim_27(%iterArg_247, %677, %583) : (tensor<2x128x128xf32>, tensor<128x128xf32>, tensor<i32>) -> tensor<2x128x128xf32>
      %757 = func.call @dynamic_update_index_in_dim_28(%iterArg_248, %709, %583) : (tensor<2x384xf32>, tensor<384xf32>, tensor<i32>) -> tensor<2x384xf32>
      %758 = func.call @dynamic_update_index_in_dim_29(%iterArg_249, %711, %583) : (tensor<2x128x384xf32>, tensor<128x384xf32>, tensor<i32>) -> tensor<2x128x384xf32>
      %c_287 = stablehlo.constant dense<1> : tensor<i32>
      %759 = stablehlo.add %iterArg_236, %c_287 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_204, %iterArg_205, %iterArg_206, %iterArg_207, %iterArg_208, %iterArg_209, %iterArg_210, %iterArg_211, %iterArg_212, %iterArg_213, %iterArg_214, %iterArg_215, %iterArg_216, %iterArg_217, %iterArg_218, %iterArg_219, %iterArg_220, %iterArg_221, %iterArg_222, %iterArg_223, %iterArg_224, %iterArg_225, %iterArg_226, %iterArg_227, %iterArg_228, %iterArg_229, %iterArg_230, %iterArg_231, %iterArg_232, %iterArg_233, %iterArg_234, %iterArg_235, %759, %746, %747, %748, %749, %750, %751, %752, %753, %754, %755, %756, %757, %758 : tensor<2x8x64x128xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x128xf32>, tensor<2x1x1x128xf32>, tensor<2x8x64x128xf32>, tensor<2x128x384xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x4x32xf32>, tensor<2x8x64x4x32xf32>, tensor<2x8x4x64x64xf32>, tensor<2x8x4x64x1xf32>, tensor<2x8x4x64x1xf32>, tensor<2x8x4x64x64xf32>, tensor<2x8x64x4x32xf32>, tensor<2x128x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x1xf32>, tensor<2x8x64x128xf32>, tensor<2x1x1x128xf32>, tensor<2x8x64x128xf32>, tensor<2x128x512xf32>, tensor<2x8x64x128xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x8x64x512xf32>, tensor<2x512x128xf32>, tensor<2x8x64x512xf32>, tensor<f32>, tensor<8x4x64x64xi1>, tensor<i32>, tensor<8x64x128xf32>, tensor<2x512xf32>, tensor<2x128x512xf32>, tensor<2x128xf32>, tensor<2x512x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128x128xf32>, tensor<2x384xf32>, tensor<2x128x384xf32>
    }
    %cst_66 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %135 = stablehlo.reduce(%134#34 init: %cst_66) applies stablehlo.add across dimensions = [0] : (tensor<8x64x128xf32>, tensor<f32>) -> tensor<64x128xf32>
    %136 = stablehlo.reshape %135 : (tensor<64x128xf32>) -> tensor<1x64x128xf32>
    %cst_67 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %137 = stablehlo.reduce(%136 init: %cst_67) applies stablehlo.add across dimensions = [0] : (tensor<1x64x128xf32>, tensor<f32>) -> tensor<64x128xf32>
    %cst_68 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %138 = stablehlo.broadcast_in_dim %cst_68, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %139 = "stablehlo.scatter"(%138, %5, %134#34) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg51: tensor<f32>, %arg52: tensor<f32>):
      %582 = stablehlo.add %arg51, %arg52 : tensor<f32>
      stablehlo.return %582 : tensor<f32>
    }) : (tensor<512x128xf32>, tensor<8x64x1xi32>, tensor<8x64x128xf32>) -> tensor<512x128xf32>
    %140 = stablehlo.add %88, %139 : tensor<512x128xf32>
    %cst_69 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %141 = stablehlo.broadcast_in_dim %cst_69, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %142 = stablehlo.multiply %141, %134#35 : tensor<2x512xf32>
    %cst_70 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %143 = stablehlo.broadcast_in_dim %cst_70, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %144 = stablehlo.multiply %143, %arg17 : tensor<2x512xf32>
    %145 = stablehlo.add %142, %144 : tensor<2x512xf32>
    %cst_71 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %146 = stablehlo.broadcast_in_dim %cst_71, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %147 = stablehlo.multiply %146, %134#36 : tensor<2x128x512xf32>
    %cst_72 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %148 = stablehlo.broadcast_in_dim %cst_72, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %149 = stablehlo.multiply %148, %arg18 : tensor<2x128x512xf32>
    %150 = stablehlo.add %147, %149 : tensor<2x128x512xf32>
    %cst_73 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %151 = stablehlo.broadcast_in_dim %cst_73, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %152 = stablehlo.multiply %151, %134#37 : tensor<2x128xf32>
    %cst_74 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %153 = stablehlo.broadcast_in_dim %cst_74, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %154 = stablehlo.multiply %153, %arg19 : tensor<2x128xf32>
    %155 = stablehlo.add %152, %154 : tensor<2x128xf32>
    %cst_75 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %156 = stablehlo.broadcast_in_dim %cst_75, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %157 = stablehlo.multiply %156, %134#38 : tensor<2x512x128xf32>
    %cst_76 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %158 = stablehlo.broadcast_in_dim %cst_76, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %159 = stablehlo.multiply %158, %arg20 : tensor<2x512x128xf32>
    %160 = stablehlo.add %157, %159 : tensor<2x512x128xf32>
    %cst_77 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %161 = stablehlo.broadcast_in_dim %cst_77, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %162 = stablehlo.multiply %161, %134#39 : tensor<2x128xf32>
    %cst_78 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %163 = stablehlo.broadcast_in_dim %cst_78, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %164 = stablehlo.multiply %163, %arg21 : tensor<2x128xf32>
    %165 = stablehlo.add %162, %164 : tensor<2x128xf32>
    %cst_79 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %166 = stablehlo.broadcast_in_dim %cst_79, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %167 = stablehlo.multiply %166, %134#40 : tensor<2x128xf32>
    %cst_80 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %168 = stablehlo.broadcast_in_dim %cst_80, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %169 = stablehlo.multiply %168, %arg22 : tensor<2x128xf32>
    %170 = stablehlo.add %167, %169 : tensor<2x128xf32>
    %cst_81 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %171 = stablehlo.broadcast_in_dim %cst_81, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %172 = stablehlo.multiply %171, %134#41 : tensor<2x128xf32>
    %cst_82 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %173 = stablehlo.broadcast_in_dim %cst_82, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %174 = stablehlo.multiply %173, %arg23 : tensor<2x128xf32>
    %175 = stablehlo.add %172, %174 : tensor<2x128xf32>
    %cst_83 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %176 = stablehlo.broadcast_in_dim %cst_83, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %177 = stablehlo.multiply %176, %134#42 : tensor<2x128xf32>
    %cst_84 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %178 = stablehlo.broadcast_in_dim %cst_84, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %179 = stablehlo.multiply %178, %arg24 : tensor<2x128xf32>
    %180 = stablehlo.add %177, %179 : tensor<2x128xf32>
    %cst_85 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %181 = stablehlo.broadcast_in_dim %cst_85, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %182 = stablehlo.multiply %181, %134#43 : tensor<2x128xf32>
    %cst_86 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %183 = stablehlo.broadcast_in_dim %cst_86, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %184 = stablehlo.multiply %183, %arg25 : tensor<2x128xf32>
    %185 = stablehlo.add %182, %184 : tensor<2x128xf32>
    %cst_87 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %186 = stablehlo.broadcast_in_dim %cst_87, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %187 = stablehlo.multiply %186, %134#44 : tensor<2x128x128xf32>
    %cst_88 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %188 = stablehlo.broadcast_in_dim %cst_88, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %189 = stablehlo.multiply %188, %arg26 : tensor<2x128x128xf32>
    %190 = stablehlo.add %187, %189 : tensor<2x128x128xf32>
    %cst_89 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %191 = stablehlo.broadcast_in_dim %cst_89, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %192 = stablehlo.multiply %191, %134#45 : tensor<2x384xf32>
    %cst_90 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %193 = stablehlo.broadcast_in_dim %cst_90, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %194 = stablehlo.multiply %193, %arg27 : tensor<2x384xf32>
    %195 = stablehlo.add %192, %194 : tensor<2x384xf32>
    %cst_91 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %196 = stablehlo.broadcast_in_dim %cst_91, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %197 = stablehlo.multiply %196, %134#46 : tensor<2x128x384xf32>
    %cst_92 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %198 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %199 = stablehlo.multiply %198, %arg28 : tensor<2x128x384xf32>
    %200 = stablehlo.add %197, %199 : tensor<2x128x384xf32>
    %cst_93 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %201 = stablehlo.broadcast_in_dim %cst_93, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %202 = stablehlo.multiply %201, %91 : tensor<128xf32>
    %cst_94 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %203 = stablehlo.broadcast_in_dim %cst_94, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %204 = stablehlo.multiply %203, %arg29 : tensor<128xf32>
    %205 = stablehlo.add %202, %204 : tensor<128xf32>
    %cst_95 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %206 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %207 = stablehlo.multiply %206, %97 : tensor<128xf32>
    %cst_96 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %208 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %209 = stablehlo.multiply %208, %arg30 : tensor<128xf32>
    %210 = stablehlo.add %207, %209 : tensor<128xf32>
    %cst_97 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %211 = stablehlo.broadcast_in_dim %cst_97, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %212 = stablehlo.multiply %211, %137 : tensor<64x128xf32>
    %cst_98 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %213 = stablehlo.broadcast_in_dim %cst_98, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %214 = stablehlo.multiply %213, %arg31 : tensor<64x128xf32>
    %215 = stablehlo.add %212, %214 : tensor<64x128xf32>
    %cst_99 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %216 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %217 = stablehlo.multiply %216, %140 : tensor<512x128xf32>
    %cst_100 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %218 = stablehlo.broadcast_in_dim %cst_100, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %219 = stablehlo.multiply %218, %arg32 : tensor<512x128xf32>
    %220 = stablehlo.add %217, %219 : tensor<512x128xf32>
    %221 = stablehlo.multiply %134#35, %134#35 : tensor<2x512xf32>
    %cst_101 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %222 = stablehlo.broadcast_in_dim %cst_101, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %223 = stablehlo.multiply %222, %221 : tensor<2x512xf32>
    %cst_102 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %224 = stablehlo.broadcast_in_dim %cst_102, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %225 = stablehlo.multiply %224, %arg33 : tensor<2x512xf32>
    %226 = stablehlo.add %223, %225 : tensor<2x512xf32>
    %227 = stablehlo.multiply %134#36, %134#36 : tensor<2x128x512xf32>
    %cst_103 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %228 = stablehlo.broadcast_in_dim %cst_103, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %229 = stablehlo.multiply %228, %227 : tensor<2x128x512xf32>
    %cst_104 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %230 = stablehlo.broadcast_in_dim %cst_104, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %231 = stablehlo.multiply %230, %arg34 : tensor<2x128x512xf32>
    %232 = stablehlo.add %229, %231 : tensor<2x128x512xf32>
    %233 = stablehlo.multiply %134#37, %134#37 : tensor<2x128xf32>
    %cst_105 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %234 = stablehlo.broadcast_in_dim %cst_105, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %235 = stablehlo.multiply %234, %233 : tensor<2x128xf32>
    %cst_106 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %236 = stablehlo.broadcast_in_dim %cst_106, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %237 = stablehlo.multiply %236, %arg35 : tensor<2x128xf32>
    %238 = stablehlo.add %235, %237 : tensor<2x128xf32>
    %239 = stablehlo.multiply %134#38, %134#38 : tensor<2x512x128xf32>
    %cst_107 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %240 = stablehlo.broadcast_in_dim %cst_107, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %241 = stablehlo.multiply %240, %239 : tensor<2x512x128xf32>
    %cst_108 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %242 = stablehlo.broadcast_in_dim %cst_108, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %243 = stablehlo.multiply %242, %arg36 : tensor<2x512x128xf32>
    %244 = stablehlo.add %241, %243 : tensor<2x512x128xf32>
    %245 = stablehlo.multiply %134#39, %134#39 : tensor<2x128xf32>
    %cst_109 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %246 = stablehlo.broadcast_in_dim %cst_109, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %247 = stablehlo.multiply %246, %245 : tensor<2x128xf32>
    %cst_110 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %248 = stablehlo.broadcast_in_dim %cst_110, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %249 = stablehlo.multiply %248, %arg37 : tensor<2x128xf32>
    %250 = stablehlo.add %247, %249 : tensor<2x128xf32>
    %251 = stablehlo.multiply %134#40, %134#40 : tensor<2x128xf32>
    %cst_111 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %252 = stablehlo.broadcast_in_dim %cst_111, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %253 = stablehlo.multiply %252, %251 : tensor<2x128xf32>
    %cst_112 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %254 = stablehlo.broadcast_in_dim %cst_112, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %255 = stablehlo.multiply %254, %arg38 : tensor<2x128xf32>
    %256 = stablehlo.add %253, %255 : tensor<2x128xf32>
    %257 = stablehlo.multiply %134#41, %134#41 : tensor<2x128xf32>
    %cst_113 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %258 = stablehlo.broadcast_in_dim %cst_113, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %259 = stablehlo.multiply %258, %257 : tensor<2x128xf32>
    %cst_114 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %260 = stablehlo.broadcast_in_dim %cst_114, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %261 = stablehlo.multiply %260, %arg39 : tensor<2x128xf32>
    %262 = stablehlo.add %259, %261 : tensor<2x128xf32>
    %263 = stablehlo.multiply %134#42, %134#42 : tensor<2x128xf32>
    %cst_115 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %264 = stablehlo.broadcast_in_dim %cst_115, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %265 = stablehlo.multiply %264, %263 : tensor<2x128xf32>
    %cst_116 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %266 = stablehlo.broadcast_in_dim %cst_116, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %267 = stablehlo.multiply %266, %arg40 : tensor<2x128xf32>
    %268 = stablehlo.add %265, %267 : tensor<2x128xf32>
    %269 = stablehlo.multiply %134#43, %134#43 : tensor<2x128xf32>
    %cst_117 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %270 = stablehlo.broadcast_in_dim %cst_117, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %271 = stablehlo.multiply %270, %269 : tensor<2x128xf32>
    %cst_118 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %272 = stablehlo.broadcast_in_dim %cst_118, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %273 = stablehlo.multiply %272, %arg41 : tensor<2x128xf32>
    %274 = stablehlo.add %271, %273 : tensor<2x128xf32>
    %275 = stablehlo.multiply %134#44, %134#44 : tensor<2x128x128xf32>
    %cst_119 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %276 = stablehlo.broadcast_in_dim %cst_119, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %277 = stablehlo.multiply %276, %275 : tensor<2x128x128xf32>
    %cst_120 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %278 = stablehlo.broadcast_in_dim %cst_120, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %279 = stablehlo.multiply %278, %arg42 : tensor<2x128x128xf32>
    %280 = stablehlo.add %277, %279 : tensor<2x128x128xf32>
    %281 = stablehlo.multiply %134#45, %134#45 : tensor<2x384xf32>
    %cst_121 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %282 = stablehlo.broadcast_in_dim %cst_121, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %283 = stablehlo.multiply %282, %281 : tensor<2x384xf32>
    %cst_122 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %284 = stablehlo.broadcast_in_dim %cst_122, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %285 = stablehlo.multiply %284, %arg43 : tensor<2x384xf32>
    %286 = stablehlo.add %283, %285 : tensor<2x384xf32>
    %287 = stablehlo.multiply %134#46, %134#46 : tensor<2x128x384xf32>
    %cst_123 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %288 = stablehlo.broadcast_in_dim %cst_123, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %289 = stablehlo.multiply %288, %287 : tensor<2x128x384xf32>
    %cst_124 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %290 = stablehlo.broadcast_in_dim %cst_124, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %291 = stablehlo.multiply %290, %arg44 : tensor<2x128x384xf32>
    %292 = stablehlo.add %289, %291 : tensor<2x128x384xf32>
    %293 = stablehlo.multiply %91, %91 : tensor<128xf32>
    %cst_125 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %294 = stablehlo.broadcast_in_dim %cst_125, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %295 = stablehlo.multiply %294, %293 : tensor<128xf32>
    %cst_126 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %296 = stablehlo.broadcast_in_dim %cst_126, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %297 = stablehlo.multiply %296, %arg45 : tensor<128xf32>
    %298 = stablehlo.add %295, %297 : tensor<128xf32>
    %299 = stablehlo.multiply %97, %97 : tensor<128xf32>
    %cst_127 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %300 = stablehlo.broadcast_in_dim %cst_127, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %301 = stablehlo.multiply %300, %299 : tensor<128xf32>
    %cst_128 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %302 = stablehlo.broadcast_in_dim %cst_128, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %303 = stablehlo.multiply %302, %arg46 : tensor<128xf32>
    %304 = stablehlo.add %301, %303 : tensor<128xf32>
    %305 = stablehlo.multiply %137, %137 : tensor<64x128xf32>
    %cst_129 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %306 = stablehlo.broadcast_in_dim %cst_129, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %307 = stablehlo.multiply %306, %305 : tensor<64x128xf32>
    %cst_130 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %308 = stablehlo.broadcast_in_dim %cst_130, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %309 = stablehlo.multiply %308, %arg47 : tensor<64x128xf32>
    %310 = stablehlo.add %307, %309 : tensor<64x128xf32>
    %311 = stablehlo.multiply %140, %140 : tensor<512x128xf32>
    %cst_131 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %312 = stablehlo.broadcast_in_dim %cst_131, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %313 = stablehlo.multiply %312, %311 : tensor<512x128xf32>
    %cst_132 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %314 = stablehlo.broadcast_in_dim %cst_132, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %315 = stablehlo.multiply %314, %arg48 : tensor<512x128xf32>
    %316 = stablehlo.add %313, %315 : tensor<512x128xf32>
    %c_133 = stablehlo.constant dense<2147483647> : tensor<i32>
    %317 = stablehlo.compare LT, %arg16, %c_133, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_134 = stablehlo.constant dense<1> : tensor<i32>
    %318 = stablehlo.add %arg16, %c_134 : tensor<i32>
    %c_135 = stablehlo.constant dense<2147483647> : tensor<i32>
    %319 = call @_where_30(%317, %318, %c_135) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %cst_136 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %320 = stablehlo.convert %319 : (tensor<i32>) -> tensor<f32>
    %321 = stablehlo.power %cst_136, %320 : tensor<f32>
    %cst_137 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %322 = stablehlo.subtract %cst_137, %321 : tensor<f32>
    %323 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %324 = stablehlo.divide %145, %323 : tensor<2x512xf32>
    %325 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %326 = stablehlo.divide %150, %325 : tensor<2x128x512xf32>
    %327 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %328 = stablehlo.divide %155, %327 : tensor<2x128xf32>
    %329 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %330 = stablehlo.divide %160, %329 : tensor<2x512x128xf32>
    %331 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %332 = stablehlo.divide %165, %331 : tensor<2x128xf32>
    %333 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %334 = stablehlo.divide %170, %333 : tensor<2x128xf32>
    %335 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %336 = stablehlo.divide %175, %335 : tensor<2x128xf32>
    %337 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %338 = stablehlo.divide %180, %337 : tensor<2x128xf32>
    %339 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %340 = stablehlo.divide %185, %339 : tensor<2x128xf32>
    %341 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %342 = stablehlo.divide %190, %341 : tensor<2x128x128xf32>
    %343 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %344 = stablehlo.divide %195, %343 : tensor<2x384xf32>
    %345 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %346 = stablehlo.divide %200, %345 : tensor<2x128x384xf32>
    %347 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %348 = stablehlo.divide %205, %347 : tensor<128xf32>
    %349 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %350 = stablehlo.divide %210, %349 : tensor<128xf32>
    %351 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %352 = stablehlo.divide %215, %351 : tensor<64x128xf32>
    %353 = stablehlo.broadcast_in_dim %322, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %354 = stablehlo.divide %220, %353 : tensor<512x128xf32>
    %cst_138 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %355 = stablehlo.convert %319 : (tensor<i32>) -> tensor<f32>
    %356 = stablehlo.power %cst_138, %355 : tensor<f32>
    %cst_139 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %357 = stablehlo.subtract %cst_139, %356 : tensor<f32>
    %358 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %359 = stablehlo.divide %226, %358 : tensor<2x512xf32>
    %360 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %361 = stablehlo.divide %232, %360 : tensor<2x128x512xf32>
    %362 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %363 = stablehlo.divide %238, %362 : tensor<2x128xf32>
    %364 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %365 = stablehlo.divide %244, %364 : tensor<2x512x128xf32>
    %366 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %367 = stablehlo.divide %250, %366 : tensor<2x128xf32>
    %368 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %369 = stablehlo.divide %256, %368 : tensor<2x128xf32>
    %370 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %371 = stablehlo.divide %262, %370 : tensor<2x128xf32>
    %372 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %373 = stablehlo.divide %268, %372 : tensor<2x128xf32>
    %374 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %375 = stablehlo.divide %274, %374 : tensor<2x128xf32>
    %376 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %377 = stablehlo.divide %280, %376 : tensor<2x128x128xf32>
    %378 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %379 = stablehlo.divide %286, %378 : tensor<2x384xf32>
    %380 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %381 = stablehlo.divide %292, %380 : tensor<2x128x384xf32>
    %382 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %383 = stablehlo.divide %298, %382 : tensor<128xf32>
    %384 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %385 = stablehlo.divide %304, %384 : tensor<128xf32>
    %386 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %387 = stablehlo.divide %310, %386 : tensor<64x128xf32>
    %388 = stablehlo.broadcast_in_dim %357, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %389 = stablehlo.divide %316, %388 : tensor<512x128xf32>
    %cst_140 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %390 = stablehlo.broadcast_in_dim %cst_140, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %391 = stablehlo.add %359, %390 : tensor<2x512xf32>
    %392 = stablehlo.sqrt %391 : tensor<2x512xf32>
    %cst_141 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %393 = stablehlo.broadcast_in_dim %cst_141, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %394 = stablehlo.add %392, %393 : tensor<2x512xf32>
    %395 = stablehlo.divide %324, %394 : tensor<2x512xf32>
    %cst_142 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %396 = stablehlo.broadcast_in_dim %cst_142, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %397 = stablehlo.add %361, %396 : tensor<2x128x512xf32>
    %398 = stablehlo.sqrt %397 : tensor<2x128x512xf32>
    %cst_143 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %399 = stablehlo.broadcast_in_dim %cst_143, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %400 = stablehlo.add %398, %399 : tensor<2x128x512xf32>
    %401 = stablehlo.divide %326, %400 : tensor<2x128x512xf32>
    %cst_144 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %402 = stablehlo.broadcast_in_dim %cst_144, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %403 = stablehlo.add %363, %402 : tensor<2x128xf32>
    %404 = stablehlo.sqrt %403 : tensor<2x128xf32>
    %cst_145 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %405 = stablehlo.broadcast_in_dim %cst_145, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %406 = stablehlo.add %404, %405 : tensor<2x128xf32>
    %407 = stablehlo.divide %328, %406 : tensor<2x128xf32>
    %cst_146 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %408 = stablehlo.broadcast_in_dim %cst_146, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %409 = stablehlo.add %365, %408 : tensor<2x512x128xf32>
    %410 = stablehlo.sqrt %409 : tensor<2x512x128xf32>
    %cst_147 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %411 = stablehlo.broadcast_in_dim %cst_147, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %412 = stablehlo.add %410, %411 : tensor<2x512x128xf32>
    %413 = stablehlo.divide %330, %412 : tensor<2x512x128xf32>
    %cst_148 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %414 = stablehlo.broadcast_in_dim %cst_148, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %415 = stablehlo.add %367, %414 : tensor<2x128xf32>
    %416 = stablehlo.sqrt %415 : tensor<2x128xf32>
    %cst_149 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %417 = stablehlo.broadcast_in_dim %cst_149, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %418 = stablehlo.add %416, %417 : tensor<2x128xf32>
    %419 = stablehlo.divide %332, %418 : tensor<2x128xf32>
    %cst_150 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %420 = stablehlo.broadcast_in_dim %cst_150, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %421 = stablehlo.add %369, %420 : tensor<2x128xf32>
    %422 = stablehlo.sqrt %421 : tensor<2x128xf32>
    %cst_151 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %423 = stablehlo.broadcast_in_dim %cst_151, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %424 = stablehlo.add %422, %423 : tensor<2x128xf32>
    %425 = stablehlo.divide %334, %424 : tensor<2x128xf32>
    %cst_152 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %426 = stablehlo.broadcast_in_dim %cst_152, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %427 = stablehlo.add %371, %426 : tensor<2x128xf32>
    %428 = stablehlo.sqrt %427 : tensor<2x128xf32>
    %cst_153 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %429 = stablehlo.broadcast_in_dim %cst_153, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %430 = stablehlo.add %428, %429 : tensor<2x128xf32>
    %431 = stablehlo.divide %336, %430 : tensor<2x128xf32>
    %cst_154 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %432 = stablehlo.broadcast_in_dim %cst_154, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %433 = stablehlo.add %373, %432 : tensor<2x128xf32>
    %434 = stablehlo.sqrt %433 : tensor<2x128xf32>
    %cst_155 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %435 = stablehlo.broadcast_in_dim %cst_155, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %436 = stablehlo.add %434, %435 : tensor<2x128xf32>
    %437 = stablehlo.divide %338, %436 : tensor<2x128xf32>
    %cst_156 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %438 = stablehlo.broadcast_in_dim %cst_156, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %439 = stablehlo.add %375, %438 : tensor<2x128xf32>
    %440 = stablehlo.sqrt %439 : tensor<2x128xf32>
    %cst_157 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %441 = stablehlo.broadcast_in_dim %cst_157, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %442 = stablehlo.add %440, %441 : tensor<2x128xf32>
    %443 = stablehlo.divide %340, %442 : tensor<2x128xf32>
    %cst_158 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %444 = stablehlo.broadcast_in_dim %cst_158, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %445 = stablehlo.add %377, %444 : tensor<2x128x128xf32>
    %446 = stablehlo.sqrt %445 : tensor<2x128x128xf32>
    %cst_159 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %447 = stablehlo.broadcast_in_dim %cst_159, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %448 = stablehlo.add %446, %447 : tensor<2x128x128xf32>
    %449 = stablehlo.divide %342, %448 : tensor<2x128x128xf32>
    %cst_160 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %450 = stablehlo.broadcast_in_dim %cst_160, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %451 = stablehlo.add %379, %450 : tensor<2x384xf32>
    %452 = stablehlo.sqrt %451 : tensor<2x384xf32>
    %cst_161 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %453 = stablehlo.broadcast_in_dim %cst_161, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %454 = stablehlo.add %452, %453 : tensor<2x384xf32>
    %455 = stablehlo.divide %344, %454 : tensor<2x384xf32>
    %cst_162 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %456 = stablehlo.broadcast_in_dim %cst_162, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %457 = stablehlo.add %381, %456 : tensor<2x128x384xf32>
    %458 = stablehlo.sqrt %457 : tensor<2x128x384xf32>
    %cst_163 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %459 = stablehlo.broadcast_in_dim %cst_163, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %460 = stablehlo.add %458, %459 : tensor<2x128x384xf32>
    %461 = stablehlo.divide %346, %460 : tensor<2x128x384xf32>
    %cst_164 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %462 = stablehlo.broadcast_in_dim %cst_164, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %463 = stablehlo.add %383, %462 : tensor<128xf32>
    %464 = stablehlo.sqrt %463 : tensor<128xf32>
    %cst_165 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %465 = stablehlo.broadcast_in_dim %cst_165, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %466 = stablehlo.add %464, %465 : tensor<128xf32>
    %467 = stablehlo.divide %348, %466 : tensor<128xf32>
    %cst_166 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %468 = stablehlo.broadcast_in_dim %cst_166, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %469 = stablehlo.add %385, %468 : tensor<128xf32>
    %470 = stablehlo.sqrt %469 : tensor<128xf32>
    %cst_167 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %471 = stablehlo.broadcast_in_dim %cst_167, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %472 = stablehlo.add %470, %471 : tensor<128xf32>
    %473 = stablehlo.divide %350, %472 : tensor<128xf32>
    %cst_168 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %474 = stablehlo.broadcast_in_dim %cst_168, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %475 = stablehlo.add %387, %474 : tensor<64x128xf32>
    %476 = stablehlo.sqrt %475 : tensor<64x128xf32>
    %cst_169 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %477 = stablehlo.broadcast_in_dim %cst_169, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %478 = stablehlo.add %476, %477 : tensor<64x128xf32>
    %479 = stablehlo.divide %352, %478 : tensor<64x128xf32>
    %cst_170 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %480 = stablehlo.broadcast_in_dim %cst_170, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %481 = stablehlo.add %389, %480 : tensor<512x128xf32>
    %482 = stablehlo.sqrt %481 : tensor<512x128xf32>
    %cst_171 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %483 = stablehlo.broadcast_in_dim %cst_171, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %484 = stablehlo.add %482, %483 : tensor<512x128xf32>
    %485 = stablehlo.divide %354, %484 : tensor<512x128xf32>
    %cst_172 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %486 = stablehlo.broadcast_in_dim %cst_172, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %487 = stablehlo.multiply %486, %arg0 : tensor<2x512xf32>
    %488 = stablehlo.add %395, %487 : tensor<2x512xf32>
    %cst_173 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %489 = stablehlo.broadcast_in_dim %cst_173, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %490 = stablehlo.multiply %489, %arg1 : tensor<2x128x512xf32>
    %491 = stablehlo.add %401, %490 : tensor<2x128x512xf32>
    %cst_174 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %492 = stablehlo.broadcast_in_dim %cst_174, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %493 = stablehlo.multiply %492, %arg2 : tensor<2x128xf32>
    %494 = stablehlo.add %407, %493 : tensor<2x128xf32>
    %cst_175 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %495 = stablehlo.broadcast_in_dim %cst_175, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %496 = stablehlo.multiply %495, %arg3 : tensor<2x512x128xf32>
    %497 = stablehlo.add %413, %496 : tensor<2x512x128xf32>
    %cst_176 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %498 = stablehlo.broadcast_in_dim %cst_176, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %499 = stablehlo.multiply %498, %arg4 : tensor<2x128xf32>
    %500 = stablehlo.add %419, %499 : tensor<2x128xf32>
    %cst_177 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %501 = stablehlo.broadcast_in_dim %cst_177, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %502 = stablehlo.multiply %501, %arg5 : tensor<2x128xf32>
    %503 = stablehlo.add %425, %502 : tensor<2x128xf32>
    %cst_178 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %504 = stablehlo.broadcast_in_dim %cst_178, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %505 = stablehlo.multiply %504, %arg6 : tensor<2x128xf32>
    %506 = stablehlo.add %431, %505 : tensor<2x128xf32>
    %cst_179 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %507 = stablehlo.broadcast_in_dim %cst_179, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %508 = stablehlo.multiply %507, %arg7 : tensor<2x128xf32>
    %509 = stablehlo.add %437, %508 : tensor<2x128xf32>
    %cst_180 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %510 = stablehlo.broadcast_in_dim %cst_180, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %511 = stablehlo.multiply %510, %arg8 : tensor<2x128xf32>
    %512 = stablehlo.add %443, %511 : tensor<2x128xf32>
    %cst_181 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %513 = stablehlo.broadcast_in_dim %cst_181, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %514 = stablehlo.multiply %513, %arg9 : tensor<2x128x128xf32>
    %515 = stablehlo.add %449, %514 : tensor<2x128x128xf32>
    %cst_182 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %516 = stablehlo.broadcast_in_dim %cst_182, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %517 = stablehlo.multiply %516, %arg10 : tensor<2x384xf32>
    %518 = stablehlo.add %455, %517 : tensor<2x384xf32>
    %cst_183 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %519 = stablehlo.broadcast_in_dim %cst_183, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %520 = stablehlo.multiply %519, %arg11 : tensor<2x128x384xf32>
    %521 = stablehlo.add %461, %520 : tensor<2x128x384xf32>
    %cst_184 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %522 = stablehlo.broadcast_in_dim %cst_184, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %523 = stablehlo.multiply %522, %arg12 : tensor<128xf32>
    %524 = stablehlo.add %467, %523 : tensor<128xf32>
    %cst_185 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %525 = stablehlo.broadcast_in_dim %cst_185, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %526 = stablehlo.multiply %525, %arg13 : tensor<128xf32>
    %527 = stablehlo.add %473, %526 : tensor<128xf32>
    %cst_186 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %528 = stablehlo.broadcast_in_dim %cst_186, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %529 = stablehlo.multiply %528, %arg14 : tensor<64x128xf32>
    %530 = stablehlo.add %479, %529 : tensor<64x128xf32>
    %cst_187 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %531 = stablehlo.broadcast_in_dim %cst_187, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %532 = stablehlo.multiply %531, %arg15 : tensor<512x128xf32>
    %533 = stablehlo.add %485, %532 : tensor<512x128xf32>
    %cst_188 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %534 = stablehlo.broadcast_in_dim %cst_188, dims = [] : (tensor<f32>) -> tensor<2x512xf32>
    %535 = stablehlo.multiply %534, %488 : tensor<2x512xf32>
    %cst_189 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %536 = stablehlo.broadcast_in_dim %cst_189, dims = [] : (tensor<f32>) -> tensor<2x128x512xf32>
    %537 = stablehlo.multiply %536, %491 : tensor<2x128x512xf32>
    %cst_190 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %538 = stablehlo.broadcast_in_dim %cst_190, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %539 = stablehlo.multiply %538, %494 : tensor<2x128xf32>
    %cst_191 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %540 = stablehlo.broadcast_in_dim %cst_191, dims = [] : (tensor<f32>) -> tensor<2x512x128xf32>
    %541 = stablehlo.multiply %540, %497 : tensor<2x512x128xf32>
    %cst_192 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %542 = stablehlo.broadcast_in_dim %cst_192, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %543 = stablehlo.multiply %542, %500 : tensor<2x128xf32>
    %cst_193 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %544 = stablehlo.broadcast_in_dim %cst_193, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %545 = stablehlo.multiply %544, %503 : tensor<2x128xf32>
    %cst_194 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %546 = stablehlo.broadcast_in_dim %cst_194, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %547 = stablehlo.multiply %546, %506 : tensor<2x128xf32>
    %cst_195 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %548 = stablehlo.broadcast_in_dim %cst_195, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %549 = stablehlo.multiply %548, %509 : tensor<2x128xf32>
    %cst_196 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %550 = stablehlo.broadcast_in_dim %cst_196, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %551 = stablehlo.multiply %550, %512 : tensor<2x128xf32>
    %cst_197 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %552 = stablehlo.broadcast_in_dim %cst_197, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %553 = stablehlo.multiply %552, %515 : tensor<2x128x128xf32>
    %cst_198 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %554 = stablehlo.broadcast_in_dim %cst_198, dims = [] : (tensor<f32>) -> tensor<2x384xf32>
    %555 = stablehlo.multiply %554, %518 : tensor<2x384xf32>
    %cst_199 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %556 = stablehlo.broadcast_in_dim %cst_199, dims = [] : (tensor<f32>) -> tensor<2x128x384xf32>
    %557 = stablehlo.multiply %556, %521 : tensor<2x128x384xf32>
    %cst_200 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %558 = stablehlo.broadcast_in_dim %cst_200, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %559 = stablehlo.multiply %558, %524 : tensor<128xf32>
    %cst_201 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %560 = stablehlo.broadcast_in_dim %cst_201, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %561 = stablehlo.multiply %560, %527 : tensor<128xf32>
    %cst_202 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %562 = stablehlo.broadcast_in_dim %cst_202, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %563 = stablehlo.multiply %562, %530 : tensor<64x128xf32>
    %cst_203 = stablehlo.constant dense<-3.000000e-04> : tensor<f32>
    %564 = stablehlo.broadcast_in_dim %cst_203, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %565 = stablehlo.multiply %564, %533 : tensor<512x128xf32>
    %566 = stablehlo.add %arg0, %535 : tensor<2x512xf32>
    %567 = stablehlo.add %arg1, %537 : tensor<2x128x512xf32>
    %568 = stablehlo.add %arg2, %539 : tensor<2x128xf32>
    %569 = stablehlo.add %arg3, %541 : tensor<2x512x128xf32>
    %570 = stablehlo.add %arg4, %543 : tensor<2x128xf32>
    %571 = stablehlo.add %arg5, %545 : tensor<2x128xf32>
    %572 = stablehlo.add %arg6, %547 : tensor<2x128xf32>
    %573 = stablehlo.add %arg7, %549 : tensor<2x128xf32>
    %574 = stablehlo.add %arg8, %551 : tensor<2x128xf32>
    %575 = stablehlo.add %arg9, %553 : tensor<2x128x128xf32>
    %576 = stablehlo.add %arg10, %555 : tensor<2x384xf32>
    %577 = stablehlo.add %arg11, %557 : tensor<2x128x384xf32>
    %578 = stablehlo.add %arg12, %559 : tensor<128xf32>
    %579 = stablehlo.add %arg13, %561 : tensor<128xf32>
    %580 = stablehlo.add %arg14, %563 : tensor<64x128xf32>
    %581 = stablehlo.add %arg15, %565 : tensor<512x128xf32>
    return %566, %567, %568, %569, %570, %571, %572, %573, %574, %575, %576, %577, %578, %579, %580, %581, %319, %145, %150, %155, %160, %165, %170, %175, %180, %185, %190, %195, %200, %205, %210, %215, %220, %226, %232, %238, %244, %250, %256, %262, %268, %274, %280, %286, %292, %298, %304, %310, %316, %79 : tensor<2x512xf32>, tensor<2x128x512xf32>, tensor<2x128xf32>, tensor<2x512x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128x128xf32>, tensor<2x384xf32>, tensor<2x128x384xf32>, tensor<128xf32>, tensor<128xf32>, tensor<64x128xf32>, tensor<512x128xf32>, tensor<i32>, tensor<2x512xf32>, tensor<2x128x512xf32>, tensor<2x128xf32>, tensor<2x512x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128x128xf32>, tensor<2x384xf32>, tensor<2x128x384xf32>, tensor<128xf32>, tensor<128xf32>, tensor<64x128xf32>, tensor<512x128xf32>, tensor<2x512xf32>, tensor<2x128x512xf32>, tensor<2x128xf32>, tensor<2x512x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128xf32>, tensor<2x128x128xf32>, tensor<2x384xf32>, tensor<2x128x384xf32>, tensor<128xf32>, tensor<128xf32>, tensor<64x128xf32>, tensor<512x128xf32>, tensor<f32>
  }
  func.func private @tril(%arg0: tensor<64x64xi1>) -> tensor<64x64xi1> {
    %0 = stablehlo.iota dim = 0 : tensor<64x64xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<64x64xi32>
    %2 = stablehlo.add %0, %1 : tensor<64x64xi32>
    %3 = stablehlo.iota dim = 1 : tensor<64x64xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<64x64xi1>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<64x64xi1>, tensor<64x64xi1>
    return %6 : tensor<64x64xi1>
  }
  func.func private @_where(%arg0: tensor<64x64xi1>, %arg1: tensor<f32>) -> (tensor<8x4x64x64xi1>, tensor<8x4x64x64xf32>) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<64x64xi1>) -> tensor<8x4x64x64xi1>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8x4x64x64xf32>
    return %0, %1 : tensor<8x4x64x64xi1>, tensor<8x4x64x64xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<2x512xf32>, %arg1: tensor<i32>) -> tensor<512xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 512] : (tensor<2x512xf32>, tensor<i32>, tensor<i32>) -> tensor<1x512xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x512xf32>) -> tensor<512xf32>
    return %1 : tensor<512xf32>
  }
  func.func private @dynamic_index_in_dim_0(%arg0: tensor<2x128x512xf32>, %arg1: tensor<i32>) -> tensor<128x512xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 128, 512] : (tensor<2x128x512xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x512xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x128x512xf32>) -> tensor<128x512xf32>
    return %1 : tensor<128x512xf32>
  }
  func.func private @dynamic_index_in_dim_1(%arg0: tensor<2x128xf32>, %arg1: tensor<i32>) -> tensor<128xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 128] : (tensor<2x128xf32>, tensor<i32>, tensor<i32>) -> tensor<1x128xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x128xf32>) -> tensor<128xf32>
    return %1 : tensor<128xf32>
  }
  func.func private @dynamic_index_in_dim_2(%arg0: tensor<2x512x128xf32>, %arg1: tensor<i32>) -> tensor<512x128xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 512, 128] : (tensor<2x512x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x512x128xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x512x128xf32>) -> tensor<512x128xf32>
    return %1 : tensor<512x128xf32>
  }
  func.func private @dynamic_index_in_dim_3(%arg0: tensor<2x128x128xf32>, %arg1: tensor<i32>) -> tensor<128x128xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 128, 128] : (tensor<2x128x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x128xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x128x128xf32>) -> tensor<128x128xf32>
    return %1 : tensor<128x128xf32>
  }
  func.func private @dynamic_index_in_dim_4(%arg0: tensor<2x384xf32>, %arg1: tensor<i32>) -> tensor<384xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 384] : (tensor<2x384xf32>, tensor<i32>, tensor<i32>) -> tensor<1x384xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x384xf32>) -> tensor<384xf32>
    return %1 : tensor<384xf32>
  }
  func.func private @dynamic_index_in_dim_5(%arg0: tensor<2x128x384xf32>, %arg1: tensor<i32>) -> tensor<128x384xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 128, 384] : (tensor<2x128x384xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x384xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x128x384xf32>) -> tensor<128x384xf32>
    return %1 : tensor<128x384xf32>
  }
  func.func private @_where_6(%arg0: tensor<8x4x64x64xf32>, %arg1: tensor<8x4x64x64xi1>, %arg2: tensor<8x4x64x64xf32>) -> tensor<8x4x64x64xf32> {
    %0 = stablehlo.select %arg1, %arg0, %arg2 : tensor<8x4x64x64xi1>, tensor<8x4x64x64xf32>
    return %0 : tensor<8x4x64x64xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<2x8x64x128xf32>, %arg1: tensor<8x64x128xf32>, %arg2: tensor<i32>) -> tensor<2x8x64x128xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3] : (tensor<8x64x128xf32>) -> tensor<1x8x64x128xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1 : (tensor<2x8x64x128xf32>, tensor<1x8x64x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x8x64x128xf32>
    return %1 : tensor<2x8x64x128xf32>
  }
  func.func private @dynamic_update_index_in_dim_7(%arg0: tensor<2x8x64x1xf32>, %arg1: tensor<8x64x1xf32>, %arg2: tensor<i32>) -> tensor<2x8x64x1xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3] : (tensor<8x64x1xf32>) -> tensor<1x8x64x1xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1 : (tensor<2x8x64x1xf32>, tensor<1x8x64x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x8x64x1xf32>
    return %1 : tensor<2x8x64x1xf32>
  }
  func.func private @dynamic_update_index_in_dim_8(%arg0: tensor<2x1x1x128xf32>, %arg1: tensor<1x1x128xf32>, %arg2: tensor<i32>) -> tensor<2x1x1x128xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3] : (tensor<1x1x128xf32>) -> tensor<1x1x1x128xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1 : (tensor<2x1x1x128xf32>, tensor<1x1x1x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x1x1x128xf32>
    return %1 : tensor<2x1x1x128xf32>
  }
  func.func private @dynamic_update_index_in_dim_9(%arg0: tensor<2x8x64x4x32xf32>, %arg1: tensor<8x64x4x32xf32>, %arg2: tensor<i32>) -> tensor<2x8x64x4x32xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3, 4] : (tensor<8x64x4x32xf32>) -> tensor<1x8x64x4x32xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1, %c_2 : (tensor<2x8x64x4x32xf32>, tensor<1x8x64x4x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x8x64x4x32xf32>
    return %1 : tensor<2x8x64x4x32xf32>
  }
  func.func private @dynamic_update_index_in_dim_10(%arg0: tensor<2x8x4x64x64xf32>, %arg1: tensor<8x4x64x64xf32>, %arg2: tensor<i32>) -> tensor<2x8x4x64x64xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3, 4] : (tensor<8x4x64x64xf32>) -> tensor<1x8x4x64x64xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1, %c_2 : (tensor<2x8x4x64x64xf32>, tensor<1x8x4x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x8x4x64x64xf32>
    return %1 : tensor<2x8x4x64x64xf32>
  }
  func.func private @dynamic_update_index_in_dim_11(%arg0: tensor<2x8x4x64x1xf32>, %arg1: tensor<8x4x64x1xf32>, %arg2: tensor<i32>) -> tensor<2x8x4x64x1xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3, 4] : (tensor<8x4x64x1xf32>) -> tensor<1x8x4x64x1xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1, %c_2 : (tensor<2x8x4x64x1xf32>, tensor<1x8x4x64x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x8x4x64x1xf32>
    return %1 : tensor<2x8x4x64x1xf32>
  }
  func.func private @dynamic_update_index_in_dim_12(%arg0: tensor<2x8x64x512xf32>, %arg1: tensor<8x64x512xf32>, %arg2: tensor<i32>) -> tensor<2x8x64x512xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2, 3] : (tensor<8x64x512xf32>) -> tensor<1x8x64x512xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0, %c_1 : (tensor<2x8x64x512xf32>, tensor<1x8x64x512xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x8x64x512xf32>
    return %1 : tensor<2x8x64x512xf32>
  }
  func.func private @log_softmax(%arg0: tensor<8x64x512xf32>) -> (tensor<8x64x512xf32>, tensor<8x64x512xf32>, tensor<8x64x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [2] : (tensor<8x64x512xf32>, tensor<f32>) -> tensor<8x64xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<8x64xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x512xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<8x64x512xf32>
    %6 = stablehlo.exponential %5 : tensor<8x64x512xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<8x64x512xf32>, tensor<f32>) -> tensor<8x64xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
    %9 = stablehlo.log %8 : tensor<8x64x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2] : (tensor<8x64x1xf32>) -> tensor<8x64x512xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<8x64x512xf32>
    return %11, %6, %8 : tensor<8x64x512xf32>, tensor<8x64x512xf32>, tensor<8x64x1xf32>
  }
  func.func private @take_along_axis(%arg0: tensor<8x64x512xf32>, %arg1: tensor<8x64x1xi32>) -> (tensor<8x64x1xf32>, tensor<8x64x1x1xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x64x1xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<8x64x1xi32>, tensor<8x64x1xi32>) -> tensor<8x64x1xi1>
    %c_0 = stablehlo.constant dense<512> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<8x64x1xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<8x64x1xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<8x64x1xi1>, tensor<8x64x1xi32>
    %5 = stablehlo.reshape %4 : (tensor<8x64x1xi32>) -> tensor<8x64x1x1xi32>
    %c_1 = stablehlo.constant dense<511> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<8x64x1x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<8x64x1x1xi32>, tensor<8x64x1x1xi32>) -> tensor<8x64x1x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [3] : (tensor<1xi32>) -> tensor<1x1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x1xi32>) -> tensor<8x64x1x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<8x64x1x1xi32>, tensor<8x64x1x1xi32>) -> tensor<8x64x1x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<8x64x1x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [3] : (tensor<8x64x1x1xi1>, tensor<i1>) -> tensor<8x64x1xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<8x64x512xf32>, tensor<8x64x1x1xi32>) -> tensor<8x64x1xf32>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x64x1xf32>
    %15 = stablehlo.select %12, %13, %14 : tensor<8x64x1xi1>, tensor<8x64x1xf32>
    return %15, %5 : tensor<8x64x1xf32>, tensor<8x64x1x1xi32>
  }
  func.func private @take_along_axis_13(%arg0: tensor<8x64x1x1xi32>, %arg1: tensor<8x64x1xf32>) -> tensor<8x64x512xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x64x512xf32>
    %1 = "stablehlo.scatter"(%0, %arg0, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [2], input_batching_dims = [0, 1], scatter_indices_batching_dims = [0, 1], scatter_dims_to_operand_dims = [2], index_vector_dim = 3>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<8x64x512xf32>, tensor<8x64x1x1xi32>, tensor<8x64x1xf32>) -> tensor<8x64x512xf32>
    return %1 : tensor<8x64x512xf32>
  }
  func.func private @log_softmax_14(%arg0: tensor<8x64x512xf32>, %arg1: tensor<8x64x1xf32>, %arg2: tensor<8x64x512xf32>) -> tensor<8x64x512xf32> {
    %0 = stablehlo.negate %arg2 : tensor<8x64x512xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x64x512xf32>, tensor<f32>) -> tensor<8x64xf32>
    %2 = stablehlo.reshape %1 : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<8x64x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [2] : (tensor<8x64x1xf32>, tensor<f32>) -> tensor<8x64xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x64xf32>) -> tensor<8x64x512xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<8x64x512xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<8x64x512xf32>
    return %7 : tensor<8x64x512xf32>
  }
  func.func private @dynamic_index_in_dim_15(%arg0: tensor<2x8x64x128xf32>, %arg1: tensor<i32>) -> tensor<8x64x128xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, sizes = [1, 8, 64, 128] : (tensor<2x8x64x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x64x128xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8x64x128xf32>) -> tensor<8x64x128xf32>
    return %1 : tensor<8x64x128xf32>
  }
  func.func private @dynamic_index_in_dim_16(%arg0: tensor<2x8x64x1xf32>, %arg1: tensor<i32>) -> tensor<8x64x1xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, sizes = [1, 8, 64, 1] : (tensor<2x8x64x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x64x1xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8x64x1xf32>) -> tensor<8x64x1xf32>
    return %1 : tensor<8x64x1xf32>
  }
  func.func private @dynamic_index_in_dim_17(%arg0: tensor<2x1x1x128xf32>, %arg1: tensor<i32>) -> tensor<1x1x128xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, sizes = [1, 1, 1, 128] : (tensor<2x1x1x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x128xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x1x1x128xf32>) -> tensor<1x1x128xf32>
    return %1 : tensor<1x1x128xf32>
  }
  func.func private @dynamic_index_in_dim_18(%arg0: tensor<2x8x64x4x32xf32>, %arg1: tensor<i32>) -> tensor<8x64x4x32xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, %c_2, sizes = [1, 8, 64, 4, 32] : (tensor<2x8x64x4x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x64x4x32xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8x64x4x32xf32>) -> tensor<8x64x4x32xf32>
    return %1 : tensor<8x64x4x32xf32>
  }
  func.func private @dynamic_index_in_dim_19(%arg0: tensor<2x8x4x64x64xf32>, %arg1: tensor<i32>) -> tensor<8x4x64x64xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, %c_2, sizes = [1, 8, 4, 64, 64] : (tensor<2x8x4x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x4x64x64xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8x4x64x64xf32>) -> tensor<8x4x64x64xf32>
    return %1 : tensor<8x4x64x64xf32>
  }
  func.func private @dynamic_index_in_dim_20(%arg0: tensor<2x8x4x64x1xf32>, %arg1: tensor<i32>) -> tensor<8x4x64x1xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, %c_2, sizes = [1, 8, 4, 64, 1] : (tensor<2x8x4x64x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x4x64x1xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8x4x64x1xf32>) -> tensor<8x4x64x1xf32>
    return %1 : tensor<8x4x64x1xf32>
  }
  func.func private @dynamic_index_in_dim_21(%arg0: tensor<2x8x64x512xf32>, %arg1: tensor<i32>) -> tensor<8x64x512xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, %c_1, sizes = [1, 8, 64, 512] : (tensor<2x8x64x512xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x64x512xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8x64x512xf32>) -> tensor<8x64x512xf32>
    return %1 : tensor<8x64x512xf32>
  }
  func.func private @_where_22(%arg0: tensor<8x4x64x64xi1>, %arg1: tensor<8x4x64x64xf32>) -> tensor<8x4x64x64xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x4x64x64xf32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<8x4x64x64xi1>, tensor<8x4x64x64xf32>
    return %1 : tensor<8x4x64x64xf32>
  }
  func.func private @dynamic_update_index_in_dim_23(%arg0: tensor<2x512xf32>, %arg1: tensor<512xf32>, %arg2: tensor<i32>) -> tensor<2x512xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<512xf32>) -> tensor<1x512xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<2x512xf32>, tensor<1x512xf32>, tensor<i32>, tensor<i32>) -> tensor<2x512xf32>
    return %1 : tensor<2x512xf32>
  }
  func.func private @dynamic_update_index_in_dim_24(%arg0: tensor<2x128x512xf32>, %arg1: tensor<128x512xf32>, %arg2: tensor<i32>) -> tensor<2x128x512xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<128x512xf32>) -> tensor<1x128x512xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<2x128x512xf32>, tensor<1x128x512xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x128x512xf32>
    return %1 : tensor<2x128x512xf32>
  }
  func.func private @dynamic_update_index_in_dim_25(%arg0: tensor<2x128xf32>, %arg1: tensor<128xf32>, %arg2: tensor<i32>) -> tensor<2x128xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<128xf32>) -> tensor<1x128xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<2x128xf32>, tensor<1x128xf32>, tensor<i32>, tensor<i32>) -> tensor<2x128xf32>
    return %1 : tensor<2x128xf32>
  }
  func.func private @dynamic_update_index_in_dim_26(%arg0: tensor<2x512x128xf32>, %arg1: tensor<512x128xf32>, %arg2: tensor<i32>) -> tensor<2x512x128xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<512x128xf32>) -> tensor<1x512x128xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<2x512x128xf32>, tensor<1x512x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x512x128xf32>
    return %1 : tensor<2x512x128xf32>
  }
  func.func private @dynamic_update_index_in_dim_27(%arg0: tensor<2x128x128xf32>, %arg1: tensor<128x128xf32>, %arg2: tensor<i32>) -> tensor<2x128x128xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<128x128xf32>) -> tensor<1x128x128xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<2x128x128xf32>, tensor<1x128x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x128x128xf32>
    return %1 : tensor<2x128x128xf32>
  }
  func.func private @dynamic_update_index_in_dim_28(%arg0: tensor<2x384xf32>, %arg1: tensor<384xf32>, %arg2: tensor<i32>) -> tensor<2x384xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<384xf32>) -> tensor<1x384xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<2x384xf32>, tensor<1x384xf32>, tensor<i32>, tensor<i32>) -> tensor<2x384xf32>
    return %1 : tensor<2x384xf32>
  }
  func.func private @dynamic_update_index_in_dim_29(%arg0: tensor<2x128x384xf32>, %arg1: tensor<128x384xf32>, %arg2: tensor<i32>) -> tensor<2x128x384xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<128x384xf32>) -> tensor<1x128x384xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<2x128x384xf32>, tensor<1x128x384xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x128x384xf32>
    return %1 : tensor<2x128x384xf32>
  }
  func.func private @_where_30(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
}
