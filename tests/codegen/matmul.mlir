// matmul: C[32x32 tile at (pid_y*32, pid_x*32)] = A[rows, :] @ B[:, cols] with K = 64 and
// row strides lda, ldb, ldc (static tile, no masks).
func.func @matmul(%a0: memref<?xf32>, %a1: memref<?xf32>, %a2: memref<?xf32>,
                  %lda: i32, %ldb: i32, %ldc: i32,
                  %pid_x: i32, %pid_y: i32, %pid_z: i32,
                  %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant 0.0 : f32
  %i0 = arith.muli %pid_y, %c32 : i32
  %j0 = arith.muli %pid_x, %c32 : i32
  %ao = arith.muli %i0, %lda : i32
  %co0 = arith.muli %i0, %ldc : i32
  %co = arith.addi %co0, %j0 : i32
  %aoi = arith.index_cast %ao : i32 to index
  %boi = arith.index_cast %j0 : i32 to index
  %coi = arith.index_cast %co : i32 to index
  %ldai = arith.index_cast %lda : i32 to index
  %ldbi = arith.index_cast %ldb : i32 to index
  %ldci = arith.index_cast %ldc : i32 to index
  %av = memref.reinterpret_cast %a0 to offset: [%aoi], sizes: [32, 64], strides: [%ldai, 1]
      : memref<?xf32> to memref<32x64xf32, strided<[?, 1], offset: ?>>
  %a = bufferization.to_tensor %av restrict : memref<32x64xf32, strided<[?, 1], offset: ?>>
  %bv = memref.reinterpret_cast %a1 to offset: [%boi], sizes: [64, 32], strides: [%ldbi, 1]
      : memref<?xf32> to memref<64x32xf32, strided<[?, 1], offset: ?>>
  %b = bufferization.to_tensor %bv restrict : memref<64x32xf32, strided<[?, 1], offset: ?>>
  %e = tensor.empty() : tensor<32x32xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<32x32xf32>) attrs = {tritium.kind = "fill", tritium.tile = [0, 0]} {
    ^bb0(%fo1: f32):
      linalg.yield %zero : f32
  } -> tensor<32x32xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<32x64xf32>, tensor<64x32xf32>) outs(%z : tensor<32x32xf32>) attrs = {tritium.kind = "contraction", tritium.tile = [4, 16, 1]} {
    ^bb0(%ma2: f32, %mb3: f32, %mc4: f32):
      %mp5 = arith.mulf %ma2, %mb3 : f32
      %ms6 = arith.addf %mc4, %mp5 : f32
      linalg.yield %ms6 : f32
  } -> tensor<32x32xf32>
  %cv = memref.reinterpret_cast %a2 to offset: [%coi], sizes: [32, 32], strides: [%ldci, 1]
      : memref<?xf32> to memref<32x32xf32, strided<[?, 1], offset: ?>>
  %ct = bufferization.to_tensor %cv restrict writable : memref<32x32xf32, strided<[?, 1], offset: ?>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<32x32xf32>) outs(%ct : tensor<32x32xf32>) attrs = {tritium.kind = "elementwise", tritium.tile = [1, 8]} {
    ^bb0(%p: f32, %o: f32):
      linalg.yield %p : f32
  } -> tensor<32x32xf32>
  bufferization.materialize_in_destination %r in restrict writable %cv
      : (tensor<32x32xf32>, memref<32x32xf32, strided<[?, 1], offset: ?>>) -> ()
  return
}
