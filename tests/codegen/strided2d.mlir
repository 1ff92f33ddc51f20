// strided2d: out[i * so + j] = 2 * x[i * sx0 + j * sx1] + i for a masked 16x32 tile at
// (pid_y*16, pid_x*32) of an m x n array: a strided (e.g. transposed) load and a strided store.
func.func @strided2d(%a0: memref<?xf32>, %a1: memref<?xf32>, %m: i32, %n: i32,
                     %sx0: i32, %sx1: i32, %so: i32,
                     %pid_x: i32, %pid_y: i32, %pid_z: i32,
                     %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %c0 = arith.constant 0 : i32
  %two = arith.constant 2.0 : f32
  %i0 = arith.muli %pid_y, %c16 : i32
  %j0 = arith.muli %pid_x, %c32 : i32
  %mr = arith.subi %m, %i0 : i32
  %mr1 = arith.minsi %mr, %c16 : i32
  %mm = arith.maxsi %mr1, %c0 : i32
  %nr = arith.subi %n, %j0 : i32
  %nr1 = arith.minsi %nr, %c32 : i32
  %nn = arith.maxsi %nr1, %c0 : i32
  %xo0 = arith.muli %i0, %sx0 : i32
  %xo1 = arith.muli %j0, %sx1 : i32
  %xo = arith.addi %xo0, %xo1 : i32
  %oo0 = arith.muli %i0, %so : i32
  %oo = arith.addi %oo0, %j0 : i32
  %xoi = arith.index_cast %xo : i32 to index
  %ooi = arith.index_cast %oo : i32 to index
  %mmi = arith.index_cast %mm : i32 to index
  %nni = arith.index_cast %nn : i32 to index
  %sx0i = arith.index_cast %sx0 : i32 to index
  %sx1i = arith.index_cast %sx1 : i32 to index
  %soi = arith.index_cast %so : i32 to index
  %xv = memref.reinterpret_cast %a0 to offset: [%xoi], sizes: [%mmi, %nni], strides: [%sx0i, %sx1i]
      : memref<?xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %x = bufferization.to_tensor %xv restrict : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %ov = memref.reinterpret_cast %a1 to offset: [%ooi], sizes: [%mmi, %nni], strides: [%soi, 1]
      : memref<?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %ot = bufferization.to_tensor %ov restrict writable : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%ot : tensor<?x?xf32>) attrs = {tritium.kind = "elementwise", tritium.tile = [1, 8]} {
    ^bb0(%p: f32, %o: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i32
      %gi = arith.addi %ii, %i0 : i32
      %fi = arith.sitofp %gi : i32 to f32
      %d = arith.mulf %p, %two : f32
      %s = arith.addf %d, %fi : f32
      linalg.yield %s : f32
  } -> tensor<?x?xf32>
  bufferization.materialize_in_destination %r in restrict writable %ov
      : (tensor<?x?xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>) -> ()
  return
}
