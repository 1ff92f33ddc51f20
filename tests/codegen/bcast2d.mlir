// bcast2d: out[i, j] = x[i] + y[j] over a 32x64 tile at (pid_y*32, pid_x*64) of an m x n
// output with row stride ldo; the tile is masked (i < m, j < n) so both extents are dynamic.
func.func @bcast2d(%a0: memref<?xf32>, %a1: memref<?xf32>, %a2: memref<?xf32>,
                   %m: i32, %n: i32, %ldo: i32,
                   %pid_x: i32, %pid_y: i32, %pid_z: i32,
                   %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %c0 = arith.constant 0 : i32
  %i0 = arith.muli %pid_y, %c32 : i32
  %j0 = arith.muli %pid_x, %c64 : i32
  %mr = arith.subi %m, %i0 : i32
  %mr1 = arith.minsi %mr, %c32 : i32
  %mm = arith.maxsi %mr1, %c0 : i32
  %nr = arith.subi %n, %j0 : i32
  %nr1 = arith.minsi %nr, %c64 : i32
  %nn = arith.maxsi %nr1, %c0 : i32
  %i0i = arith.index_cast %i0 : i32 to index
  %j0i = arith.index_cast %j0 : i32 to index
  %mmi = arith.index_cast %mm : i32 to index
  %nni = arith.index_cast %nn : i32 to index
  %ldoi = arith.index_cast %ldo : i32 to index
  %oo = arith.muli %i0, %ldo : i32
  %oo1 = arith.addi %oo, %j0 : i32
  %ooi = arith.index_cast %oo1 : i32 to index
  %xv = memref.reinterpret_cast %a0 to offset: [%i0i], sizes: [%mmi], strides: [1]
      : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %x = bufferization.to_tensor %xv restrict : memref<?xf32, strided<[1], offset: ?>>
  %yv = memref.reinterpret_cast %a1 to offset: [%j0i], sizes: [%nni], strides: [1]
      : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %y = bufferization.to_tensor %yv restrict : memref<?xf32, strided<[1], offset: ?>>
  %ov = memref.reinterpret_cast %a2 to offset: [%ooi], sizes: [%mmi, %nni], strides: [%ldoi, 1]
      : memref<?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %ot = bufferization.to_tensor %ov restrict writable : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<?xf32>, tensor<?xf32>) outs(%ot : tensor<?x?xf32>) attrs = {tritium.kind = "elementwise", tritium.tile = [1, 8]} {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
  } -> tensor<?x?xf32>
  bufferization.materialize_in_destination %r in restrict writable %ov
      : (tensor<?x?xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>) -> ()
  return
}
