// A 2-layer residual MLP language model as jax.jit(loss).lower(...).as_text() prints it: token and
// position embeddings, lax.scan over stacked layer weights (a while over a counter with
// dynamic_slice of the stacks), a LayerNorm written out, GeLU in a private function, a tied LM head
// and a log-sum-exp loss.
module @jit_loss attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<128x64xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<16x64xf32>, %arg2: tensor<2x64x256xf32>, %arg3: tensor<2x256x64xf32>, %arg4: tensor<2x64xf32>, %arg5: tensor<8x16xi32>) -> (tensor<f32> {jax.result_info = ""}) {
    %0 = "stablehlo.gather"(%arg0, %arg5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 64>}> : (tensor<128x64xf32>, tensor<8x16xi32>) -> tensor<8x16x64xf32> loc(#loc2)
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<16x64xf32>) -> tensor<8x16x64xf32>
    %2 = stablehlo.add %0, %1 : tensor<8x16x64xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %3:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %2) : tensor<i32>, tensor<8x16x64xf32>
     cond {
      %c_1 = stablehlo.constant dense<2> : tensor<i32>
      %10 = stablehlo.compare  LT, %iterArg, %c_1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %10 : tensor<i1>
    } do {
      %c_1 = stablehlo.constant dense<0> : tensor<i32>
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %10 = stablehlo.reduce(%iterArg_0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
      %cst_2 = stablehlo.constant dense<1.562500e-02> : tensor<8x16xf32>
      %11 = stablehlo.multiply %10, %cst_2 : tensor<8x16xf32>
      %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x64xf32>
      %13 = stablehlo.subtract %iterArg_0, %12 : tensor<8x16x64xf32>
      %14 = stablehlo.multiply %13, %13 : tensor<8x16x64xf32>
      %15 = stablehlo.reduce(%14 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
      %16 = stablehlo.multiply %15, %cst_2 : tensor<8x16xf32>
      %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<8x16xf32>
      %17 = stablehlo.add %16, %cst_3 : tensor<8x16xf32>
      %18 = stablehlo.rsqrt %17 : tensor<8x16xf32>
      %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x64xf32>
      %20 = stablehlo.multiply %13, %19 : tensor<8x16x64xf32>
      %21 = stablehlo.dynamic_slice %arg4, %iterArg, %c_1, sizes = [1, 64] : (tensor<2x64xf32>, tensor<i32>, tensor<i32>) -> tensor<1x64xf32>
      %22 = stablehlo.reshape %21 : (tensor<1x64xf32>) -> tensor<64xf32>
      %23 = stablehlo.broadcast_in_dim %22, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
      %24 = stablehlo.multiply %20, %23 : tensor<8x16x64xf32>
      %25 = stablehlo.dynamic_slice %arg2, %iterArg, %c_1, %c_1, sizes = [1, 64, 256] : (tensor<2x64x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x256xf32>
      %26 = stablehlo.reshape %25 : (tensor<1x64x256xf32>) -> tensor<64x256xf32>
      %27 = stablehlo.dot_general %24, %26, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32> loc(#loc3)
      %28 = func.call @gelu(%27) : (tensor<8x16x256xf32>) -> tensor<8x16x256xf32>
      %29 = stablehlo.dynamic_slice %arg3, %iterArg, %c_1, %c_1, sizes = [1, 256, 64] : (tensor<2x256x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x256x64xf32>
      %30 = stablehlo.reshape %29 : (tensor<1x256x64xf32>) -> tensor<256x64xf32>
      %31 = stablehlo.dot_general %28, %30, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32> loc(#loc4)
      %32 = stablehlo.add %iterArg_0, %31 : tensor<8x16x64xf32>
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %33 = stablehlo.add %iterArg, %c_4 : tensor<i32>
      stablehlo.return %33, %32 : tensor<i32>, tensor<8x16x64xf32>
    }
    %4 = stablehlo.dot_general %3#1, %arg0, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<128x64xf32>) -> tensor<8x16x128xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.maximum across dimensions = [2] : (tensor<8x16x128xf32>, tensor<f32>) -> tensor<8x16xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x128xf32>
    %7 = stablehlo.subtract %4, %6 : tensor<8x16x128xf32>
    %8 = stablehlo.exponential %7 : tensor<8x16x128xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst_0) across dimensions = [0, 1, 2] : (tensor<8x16x128xf32>, tensor<f32>) -> tensor<f32>
     reducer(%arg6: tensor<f32>, %arg7: tensor<f32>)  {
      %11 = stablehlo.add %arg6, %arg7 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }
    %10 = stablehlo.log %9 : tensor<f32>
    return %10 : tensor<f32>
  }
  func.func private @gelu(%arg0: tensor<8x16x256xf32>) -> tensor<8x16x256xf32> {
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<8x16x256xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<8x16x256xf32>
    %cst_1 = stablehlo.constant dense<0.797884583> : tensor<8x16x256xf32>
    %0 = stablehlo.multiply %arg0, %cst_1 : tensor<8x16x256xf32>
    %1 = stablehlo.tanh %0 : tensor<8x16x256xf32>
    %2 = stablehlo.add %1, %cst_0 : tensor<8x16x256xf32>
    %3 = stablehlo.multiply %arg0, %2 : tensor<8x16x256xf32>
    %4 = stablehlo.multiply %3, %cst : tensor<8x16x256xf32>
    return %4 : tensor<8x16x256xf32>
  }
}
#loc2 = loc("jit(loss)/jit(main)/embed/gather"("model.py":12:8))
#loc3 = loc("jit(loss)/jit(main)/while/body/mlp/fc1/dot_general"("model.py":20:10))
#loc4 = loc("jit(loss)/jit(main)/while/body/mlp/fc2/dot_general"("model.py":21:10))
