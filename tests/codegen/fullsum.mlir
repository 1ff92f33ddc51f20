// fullsum: out[pid] = sum of x[pid*1024 + i] for i < min(1024, n - pid*1024); masked load padded with 0.
func.func @fullsum(%a0: memref<?xf32>, %a1: memref<?xf32>, %n: i32,
                   %pid_x: i32, %pid_y: i32, %pid_z: i32,
                   %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %c1024 = arith.constant 1024 : i32
  %c0 = arith.constant 0 : i32
  %ci1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %off = arith.muli %pid_x, %c1024 : i32
  %rem = arith.subi %n, %off : i32
  %m0 = arith.minsi %rem, %c1024 : i32
  %m = arith.maxsi %m0, %c0 : i32
  %offi = arith.index_cast %off : i32 to index
  %mi = arith.index_cast %m : i32 to index
  %xv = memref.reinterpret_cast %a0 to offset: [%offi], sizes: [%mi], strides: [1]
      : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %x = bufferization.to_tensor %xv restrict : memref<?xf32, strided<[1], offset: ?>>
  %hi = arith.subi %ci1024, %mi : index
  %xp = tensor.pad %x low[0] high[%hi] {
    ^bb0(%i: index):
      tensor.yield %zero : f32
  } : tensor<?xf32> to tensor<1024xf32>
  %e = tensor.empty() : tensor<f32>
  %z = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%e : tensor<f32>) attrs = {tritium.kind = "fill"} {
    ^bb0(%fo1: f32):
      linalg.yield %zero : f32
  } -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%xp : tensor<1024xf32>) outs(%z : tensor<f32>) attrs = {tritium.kind = "row_reduction", tritium.lanes = 32, tritium.tile = [0]} {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<f32>
  %s = tensor.extract %r[] : tensor<f32>
  %pidi = arith.index_cast %pid_x : i32 to index
  memref.store %s, %a1[%pidi] : memref<?xf32>
  return
}
