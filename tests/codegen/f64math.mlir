// f64math: out[i] = exp(x) + erf(x) + tanh(x) + sin(x) + atan2(x, 2) + pow(|x|, 1.5) in f64
// over masked blocks of 256: lo_math does not expand f64, so these become libm calls
// (convert-math-to-llvm / convert-math-to-libm) and the .so must reference only libm.
func.func @f64math(%a0: memref<?xf64>, %a1: memref<?xf64>, %n: i32,
                   %pid_x: i32, %pid_y: i32, %pid_z: i32,
                   %num_x: i32, %num_y: i32, %num_z: i32, %pctx: !llvm.ptr) {
  %c256 = arith.constant 256 : i32
  %c0 = arith.constant 0 : i32
  %two = arith.constant 2.0 : f64
  %p = arith.constant 1.5 : f64
  %off = arith.muli %pid_x, %c256 : i32
  %rem = arith.subi %n, %off : i32
  %m0 = arith.minsi %rem, %c256 : i32
  %m = arith.maxsi %m0, %c0 : i32
  %offi = arith.index_cast %off : i32 to index
  %mi = arith.index_cast %m : i32 to index
  %xv = memref.reinterpret_cast %a0 to offset: [%offi], sizes: [%mi], strides: [1]
      : memref<?xf64> to memref<?xf64, strided<[1], offset: ?>>
  %x = bufferization.to_tensor %xv restrict : memref<?xf64, strided<[1], offset: ?>>
  %ov = memref.reinterpret_cast %a1 to offset: [%offi], sizes: [%mi], strides: [1]
      : memref<?xf64> to memref<?xf64, strided<[1], offset: ?>>
  %o = bufferization.to_tensor %ov restrict writable : memref<?xf64, strided<[1], offset: ?>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<?xf64>) outs(%o : tensor<?xf64>) attrs = {tritium.kind = "elementwise", tritium.tile = [4]} {
    ^bb0(%v: f64, %out: f64):
      %e = math.exp %v : f64
      %f = math.erf %v : f64
      %t = math.tanh %v : f64
      %s = math.sin %v : f64
      %a = math.atan2 %v, %two : f64
      %ab = math.absf %v : f64
      %w = math.powf %ab, %p : f64
      %s1 = arith.addf %e, %f : f64
      %s2 = arith.addf %s1, %t : f64
      %s3 = arith.addf %s2, %s : f64
      %s4 = arith.addf %s3, %a : f64
      %s5 = arith.addf %s4, %w : f64
      linalg.yield %s5 : f64
  } -> tensor<?xf64>
  bufferization.materialize_in_destination %r in restrict writable %ov
      : (tensor<?xf64>, memref<?xf64, strided<[1], offset: ?>>) -> ()
  return
}
