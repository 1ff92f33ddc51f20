// trig: sin and cos over masked 1-D blocks of 512, one store (generic) each.
// The inputs mix ordinary and huge arguments (up to 3e38), so both range reductions
// run, the Payne-Hanek one as a cold region behind a branch (compiler/src/cg_cold.c).
// math.* ops on %vN values are replaced by lo_math_emit expansions by the test
// harness (tests/codegen/expand.h) before compiling; the file also compiles as is.
func.func @trig(%a0: memref<?xf32>, %a1: memref<?xf32>, %a2: memref<?xf32>,
                %n: i32, %pid_x: i32, %pid_y: i32, %pid_z: i32,
                %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %c512 = arith.constant 512 : i32
  %c0 = arith.constant 0 : i32
  %off = arith.muli %pid_x, %c512 : i32
  %rem = arith.subi %n, %off : i32
  %m0 = arith.minsi %rem, %c512 : i32
  %m = arith.maxsi %m0, %c0 : i32
  %offi = arith.index_cast %off : i32 to index
  %mi = arith.index_cast %m : i32 to index
  %xv = memref.reinterpret_cast %a0 to offset: [%offi], sizes: [%mi], strides: [1]
      : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %x = bufferization.to_tensor %xv restrict : memref<?xf32, strided<[1], offset: ?>>
  %o0v = memref.reinterpret_cast %a1 to offset: [%offi], sizes: [%mi], strides: [1]
      : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %o0 = bufferization.to_tensor %o0v restrict writable : memref<?xf32, strided<[1], offset: ?>>
  %r0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                        iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%o0 : tensor<?xf32>) attrs = {tritium.kind = "elementwise", tritium.tile = [8]} {
    ^bb0(%v1: f32, %o: f32):
      %v2 = math.sin %v1 : f32
      linalg.yield %v2 : f32
  } -> tensor<?xf32>
  bufferization.materialize_in_destination %r0 in restrict writable %o0v
      : (tensor<?xf32>, memref<?xf32, strided<[1], offset: ?>>) -> ()
  %o1v = memref.reinterpret_cast %a2 to offset: [%offi], sizes: [%mi], strides: [1]
      : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %o1 = bufferization.to_tensor %o1v restrict writable : memref<?xf32, strided<[1], offset: ?>>
  %r1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                        iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%o1 : tensor<?xf32>) attrs = {tritium.kind = "elementwise", tritium.tile = [8]} {
    ^bb0(%v11: f32, %o: f32):
      %v12 = math.cos %v11 : f32
      linalg.yield %v12 : f32
  } -> tensor<?xf32>
  bufferization.materialize_in_destination %r1 in restrict writable %o1v
      : (tensor<?xf32>, memref<?xf32, strided<[1], offset: ?>>) -> ()
  return
}
