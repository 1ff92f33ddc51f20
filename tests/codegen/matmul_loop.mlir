// matmul_loop: a Triton-style dot kernel: C[32x32 tile] = sum over K blocks of 16 of
// A[rows, k:k+16] @ B[k:k+16, cols], the accumulator carried by scf.for (K is a
// runtime multiple of 16), row strides lda, ldb, ldc.
func.func @matmul_loop(%a0: memref<?xf32>, %a1: memref<?xf32>, %a2: memref<?xf32>,
                       %K: i32, %lda: i32, %ldb: i32, %ldc: i32,
                       %pid_x: i32, %pid_y: i32, %pid_z: i32,
                       %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %c32 = arith.constant 32 : i32
  %c16 = arith.constant 16 : i32
  %c0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %i0 = arith.muli %pid_y, %c32 : i32
  %j0 = arith.muli %pid_x, %c32 : i32
  %ldai = arith.index_cast %lda : i32 to index
  %ldbi = arith.index_cast %ldb : i32 to index
  %ldci = arith.index_cast %ldc : i32 to index
  %e = tensor.empty() : tensor<32x32xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<32x32xf32>) attrs = {tritium.kind = "fill", tritium.tile = [0, 0]} {
    ^bb0(%fo1: f32):
      linalg.yield %zero : f32
  } -> tensor<32x32xf32>
  %acc = scf.for %k = %c0 to %K step %c16 iter_args(%c = %z) -> (tensor<32x32xf32>) : i32 {
    %ao0 = arith.muli %i0, %lda : i32
    %ao = arith.addi %ao0, %k : i32
    %bo0 = arith.muli %k, %ldb : i32
    %bo = arith.addi %bo0, %j0 : i32
    %aoi = arith.index_cast %ao : i32 to index
    %boi = arith.index_cast %bo : i32 to index
    %av = memref.reinterpret_cast %a0 to offset: [%aoi], sizes: [32, 16], strides: [%ldai, 1]
        : memref<?xf32> to memref<32x16xf32, strided<[?, 1], offset: ?>>
    %a = bufferization.to_tensor %av restrict : memref<32x16xf32, strided<[?, 1], offset: ?>>
    %bv = memref.reinterpret_cast %a1 to offset: [%boi], sizes: [16, 32], strides: [%ldbi, 1]
        : memref<?xf32> to memref<16x32xf32, strided<[?, 1], offset: ?>>
    %b = bufferization.to_tensor %bv restrict : memref<16x32xf32, strided<[?, 1], offset: ?>>
    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%c : tensor<32x32xf32>) attrs = {tritium.kind = "contraction", tritium.tile = [4, 16, 1]} {
      ^bb0(%ma2: f32, %mb3: f32, %mc4: f32):
        %mp5 = arith.mulf %ma2, %mb3 : f32
        %ms6 = arith.addf %mc4, %mp5 : f32
        linalg.yield %ms6 : f32
    } -> tensor<32x32xf32>
    scf.yield %m : tensor<32x32xf32>
  }
  %co0 = arith.muli %i0, %ldc : i32
  %co = arith.addi %co0, %j0 : i32
  %coi = arith.index_cast %co : i32 to index
  %cv = memref.reinterpret_cast %a2 to offset: [%coi], sizes: [32, 32], strides: [%ldci, 1]
      : memref<?xf32> to memref<32x32xf32, strided<[?, 1], offset: ?>>
  bufferization.materialize_in_destination %acc in restrict writable %cv
      : (tensor<32x32xf32>, memref<32x32xf32, strided<[?, 1], offset: ?>>) -> ()
  return
}
