// vadd: out = x + y over masked 1-D blocks of 1024 (the extent min(1024, n - pid*1024) is dynamic).
func.func @add_kernel(%a0: memref<?xf32>, %a1: memref<?xf32>, %a2: memref<?xf32>, %a3: i32,
    %pid_x: i32, %pid_y: i32, %pid_z: i32, %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %c1024 = arith.constant 1024 : i32
  %c0 = arith.constant 0 : i32
  %off = arith.muli %pid_x, %c1024 : i32
  %rem = arith.subi %a3, %off : i32
  %n0 = arith.minsi %rem, %c1024 : i32
  %n = arith.maxsi %n0, %c0 : i32
  %offi = arith.index_cast %off : i32 to index
  %ni = arith.index_cast %n : i32 to index
  %x = memref.reinterpret_cast %a0 to offset: [%offi], sizes: [%ni], strides: [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %xt = bufferization.to_tensor %x restrict : memref<?xf32, strided<[1], offset: ?>>
  %y = memref.reinterpret_cast %a1 to offset: [%offi], sizes: [%ni], strides: [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %yt = bufferization.to_tensor %y restrict : memref<?xf32, strided<[1], offset: ?>>
  %o = memref.reinterpret_cast %a2 to offset: [%offi], sizes: [%ni], strides: [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %ot = bufferization.to_tensor %o restrict writable : memref<?xf32, strided<[1], offset: ?>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%xt, %yt : tensor<?xf32>, tensor<?xf32>) outs(%ot : tensor<?xf32>) attrs = {tritium.kind = "elementwise", tritium.tile = [8]} {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %v = arith.addf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  bufferization.materialize_in_destination %r in restrict writable %o : (tensor<?xf32>, memref<?xf32, strided<[1], offset: ?>>) -> ()
  return
}
