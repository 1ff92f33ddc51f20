// gelu: three GELU forms over masked 1-D blocks of 512, one store (generic) each:
//   out0 = 0.5 x (1 + erf(x / sqrt 2)), out1 = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
//   out2 = x / (1 + exp(-1.702 x)).
// math.* ops on %vN values are replaced by lo_math_emit expansions by the test
// harness (tests/codegen/expand.h) before compiling; the file also compiles as is.
func.func @gelu(%a0: memref<?xf32>, %a1: memref<?xf32>, %a2: memref<?xf32>, %a3: memref<?xf32>,
                %n: i32, %pid_x: i32, %pid_y: i32, %pid_z: i32,
                %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %c512 = arith.constant 512 : i32
  %c0 = arith.constant 0 : i32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %rsqrt2 = arith.constant 0.707106781 : f32
  %k0 = arith.constant 0.797884561 : f32
  %k1 = arith.constant 0.044715 : f32
  %k2 = arith.constant -1.702 : f32
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
      %v2 = arith.mulf %v1, %rsqrt2 : f32
      %v3 = math.erf %v2 : f32
      %v4 = arith.addf %v3, %one : f32
      %v5 = arith.mulf %v1, %half : f32
      %v6 = arith.mulf %v5, %v4 : f32
      linalg.yield %v6 : f32
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
      %v12 = arith.mulf %v11, %v11 : f32
      %v13 = arith.mulf %v12, %v11 : f32
      %v14 = arith.mulf %v13, %k1 : f32
      %v15 = arith.addf %v11, %v14 : f32
      %v16 = arith.mulf %v15, %k0 : f32
      %v17 = math.tanh %v16 : f32
      %v18 = arith.addf %v17, %one : f32
      %v19 = arith.mulf %v11, %half : f32
      %v20 = arith.mulf %v19, %v18 : f32
      linalg.yield %v20 : f32
  } -> tensor<?xf32>
  bufferization.materialize_in_destination %r1 in restrict writable %o1v
      : (tensor<?xf32>, memref<?xf32, strided<[1], offset: ?>>) -> ()
  %o2v = memref.reinterpret_cast %a3 to offset: [%offi], sizes: [%mi], strides: [1]
      : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %o2 = bufferization.to_tensor %o2v restrict writable : memref<?xf32, strided<[1], offset: ?>>
  %r2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                        iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%o2 : tensor<?xf32>) attrs = {tritium.kind = "elementwise", tritium.tile = [8]} {
    ^bb0(%v21: f32, %o: f32):
      %v22 = arith.mulf %v21, %k2 : f32
      %v23 = math.exp %v22 : f32
      %v24 = arith.addf %v23, %one : f32
      %v25 = arith.divf %v21, %v24 : f32
      linalg.yield %v25 : f32
  } -> tensor<?xf32>
  bufferization.materialize_in_destination %r2 in restrict writable %o2v
      : (tensor<?xf32>, memref<?xf32, strided<[1], offset: ?>>) -> ()
  return
}
