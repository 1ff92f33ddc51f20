// rowsum: out[pid*16 + i] = sum_j x[(pid*16 + i) * ld + j], a 16x128 tile (row reduction).
func.func @rowsum(%a0: memref<?xf32>, %a1: memref<?xf32>, %ld: i32,
                  %pid_x: i32, %pid_y: i32, %pid_z: i32,
                  %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %c16 = arith.constant 16 : i32
  %zero = arith.constant 0.0 : f32
  %row0 = arith.muli %pid_x, %c16 : i32
  %off = arith.muli %row0, %ld : i32
  %offi = arith.index_cast %off : i32 to index
  %ldi = arith.index_cast %ld : i32 to index
  %row0i = arith.index_cast %row0 : i32 to index
  %xv = memref.reinterpret_cast %a0 to offset: [%offi], sizes: [16, 128], strides: [%ldi, 1]
      : memref<?xf32> to memref<16x128xf32, strided<[?, 1], offset: ?>>
  %x = bufferization.to_tensor %xv restrict : memref<16x128xf32, strided<[?, 1], offset: ?>>
  %e = tensor.empty() : tensor<16xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<16xf32>) attrs = {tritium.kind = "fill", tritium.tile = [0]} {
    ^bb0(%fo1: f32):
      linalg.yield %zero : f32
  } -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<16x128xf32>) outs(%z : tensor<16xf32>) attrs = {tritium.kind = "row_reduction", tritium.lanes = 32, tritium.tile = [1, 0]} {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<16xf32>
  %ov = memref.reinterpret_cast %a1 to offset: [%row0i], sizes: [16], strides: [1]
      : memref<?xf32> to memref<16xf32, strided<[1], offset: ?>>
  %ot = bufferization.to_tensor %ov restrict writable : memref<16xf32, strided<[1], offset: ?>>
  %st = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                        iterator_types = ["parallel"]}
      ins(%r : tensor<16xf32>) outs(%ot : tensor<16xf32>) attrs = {tritium.kind = "elementwise", tritium.tile = [8]} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
  } -> tensor<16xf32>
  bufferization.materialize_in_destination %st in restrict writable %ov
      : (tensor<16xf32>, memref<16xf32, strided<[1], offset: ?>>) -> ()
  return
}
