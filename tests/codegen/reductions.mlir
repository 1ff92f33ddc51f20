// reductions: over an 8x256 tile (row stride 256): out1 = row sums of squares (elementwise
// op fused into the reduction), out2 = row max (a max reduction), out3 = row argmax
// (a two-output generic whose combiner tile_reduction_using_for cannot split), out4 = column
// sums (the reduction loop is the outer one).
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m1 = affine_map<(d0, d1) -> (d0)>
func.func @reductions(%a0: memref<?xf32>, %a1: memref<?xf32>, %a2: memref<?xf32>, %a3: memref<?xi32>,
                %a4: memref<?xf32>,
                %pid_x: i32, %pid_y: i32, %pid_z: i32, %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %z32 = arith.constant 0 : i32
  %xv = memref.reinterpret_cast %a0 to offset: [0], sizes: [8, 256], strides: [256, 1] : memref<?xf32> to memref<8x256xf32, strided<[256, 1]>>
  %x = bufferization.to_tensor %xv restrict : memref<8x256xf32, strided<[256, 1]>>
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<8xf32>) attrs = {tritium.kind = "fill", tritium.tile = [0]} {
    ^bb0(%fo1: f32):
      linalg.yield %zero : f32
  } -> tensor<8xf32>
  %sq = linalg.generic {indexing_maps = [#m2, #m1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x256xf32>) outs(%z : tensor<8xf32>) attrs = {tritium.kind = "row_reduction", tritium.lanes = 32, tritium.tile = [1, 0]} {
    ^bb0(%in: f32, %acc: f32):
      %p = arith.mulf %in, %in : f32
      %s = arith.addf %p, %acc : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  %o1 = memref.reinterpret_cast %a1 to offset: [0], sizes: [8], strides: [1] : memref<?xf32> to memref<8xf32, strided<[1]>>
  bufferization.materialize_in_destination %sq in restrict writable %o1 : (tensor<8xf32>, memref<8xf32, strided<[1]>>) -> ()
  %mi = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<8xf32>) attrs = {tritium.kind = "fill", tritium.tile = [0]} {
    ^bb0(%fo2: f32):
      linalg.yield %ninf : f32
  } -> tensor<8xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x256xf32>) outs(%mi : tensor<8xf32>) attrs = {tritium.kind = "row_reduction", tritium.lanes = 32, tritium.tile = [1, 0]} {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  %o2 = memref.reinterpret_cast %a2 to offset: [0], sizes: [8], strides: [1] : memref<?xf32> to memref<8xf32, strided<[1]>>
  bufferization.materialize_in_destination %mx in restrict writable %o2 : (tensor<8xf32>, memref<8xf32, strided<[1]>>) -> ()
  %ei = tensor.empty() : tensor<8xi32>
  %zi = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%ei : tensor<8xi32>) attrs = {tritium.kind = "fill", tritium.tile = [0]} {
    ^bb0(%fo3: i32):
      linalg.yield %z32 : i32
  } -> tensor<8xi32>
  %am:2 = linalg.generic {indexing_maps = [#m2, #m1, #m1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x256xf32>) outs(%mi, %zi : tensor<8xf32>, tensor<8xi32>) attrs = {tritium.kind = "reduction", tritium.tile = [1, 0]} {
    ^bb0(%in: f32, %acc: f32, %idx: i32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i32
      %gt = arith.cmpf ogt, %in, %acc : f32
      %nv = arith.select %gt, %in, %acc : f32
      %ni = arith.select %gt, %ji, %idx : i32
      linalg.yield %nv, %ni : f32, i32
  } -> (tensor<8xf32>, tensor<8xi32>)
  %o3 = memref.reinterpret_cast %a3 to offset: [0], sizes: [8], strides: [1] : memref<?xi32> to memref<8xi32, strided<[1]>>
  bufferization.materialize_in_destination %am#1 in restrict writable %o3 : (tensor<8xi32>, memref<8xi32, strided<[1]>>) -> ()
  %ec = tensor.empty() : tensor<256xf32>
  %zc = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%ec : tensor<256xf32>) attrs = {tritium.kind = "fill", tritium.tile = [0]} {
    ^bb0(%fo4: f32):
      linalg.yield %zero : f32
  } -> tensor<256xf32>
  %cs = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<8x256xf32>) outs(%zc : tensor<256xf32>) attrs = {tritium.kind = "column_reduction", tritium.tile = [1, 8]} {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<256xf32>
  %o4 = memref.reinterpret_cast %a4 to offset: [0], sizes: [256], strides: [1] : memref<?xf32> to memref<256xf32, strided<[1]>>
  bufferization.materialize_in_destination %cs in restrict writable %o4 : (tensor<256xf32>, memref<256xf32, strided<[1]>>) -> ()
  return
}
