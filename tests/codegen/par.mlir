// par: an smt.parallel loop (scf.for {tritium.parallel}, rows 1, 3, ... < stop) inside an ordinary loop over k < K: out[s, :] = k * x[s, :] + sum(x[s, :]), the last k winning; outlined by cg_par.c and run through the .so's own serial tritium_parallel_for (no runtime here).
func.func @par_rows(%v1: memref<?xf32>, %v2: memref<?xf32>, %v3: i32, %v4: i32, %v5: i32, %v6: i32, %v7: i32, %v8: i32, %v9: i32, %v10: i32, %v11: !llvm.ptr) {
  %v12 = arith.constant 0 : i32
  %v13 = arith.constant 1 : i32
  scf.for %v14 = %v12 to %v3 step %v13 : i32 {
    %v15 = arith.constant 2 : i32
    scf.for %v16 = %v13 to %v4 step %v15 : i32 {
      %v17 = arith.constant 32 : i32
      %v18 = arith.muli %v16, %v17 : i32
      %v19 = arith.sitofp %v14 : i32 to f32
      %v20 = arith.constant 0x00000000 : f32
      %v21 = bufferization.alloc_tensor() : tensor<f32>
      %v22 = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%v21 : tensor<f32>) attrs = {tritium.kind = "fill"} {
      ^bb0(%v23: f32):
        linalg.yield %v20 : f32
      } -> tensor<f32>
      %v25 = arith.index_cast %v16 : i32 to index
      %v26 = arith.constant 32 : index
      %v27 = arith.muli %v25, %v26 : index
      %v28 = memref.reinterpret_cast %v1 to offset: [%v27], sizes: [32], strides: [1] : memref<?xf32> to memref<32xf32, strided<[1], offset: ?>>
      %v29 = bufferization.to_tensor %v28 restrict : memref<32xf32, strided<[1], offset: ?>>
      %v32 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%v29 : tensor<32xf32>) outs(%v22 : tensor<f32>) attrs = {tritium.kind = "row_reduction", tritium.tile = [0]} {
      ^bb0(%v30: f32, %v24: f32):
        %v31 = arith.addf %v24, %v30 fastmath<contract> : f32
        linalg.yield %v31 : f32
      } -> tensor<f32>
      %v33 = tensor.extract %v32[] : tensor<f32>
      %v34 = memref.reinterpret_cast %v2 to offset: [%v27], sizes: [32], strides: [1] : memref<?xf32> to memref<32xf32, strided<[1], offset: ?>>
      %v35 = bufferization.to_tensor %v34 restrict writable : memref<32xf32, strided<[1], offset: ?>>
      %v38 = memref.reinterpret_cast %v1 to offset: [%v27], sizes: [32], strides: [1] : memref<?xf32> to memref<32xf32, strided<[1], offset: ?>>
      %v39 = bufferization.to_tensor %v38 restrict : memref<32xf32, strided<[1], offset: ?>>
      %v36 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%v39 : tensor<32xf32>) outs(%v35 : tensor<32xf32>) attrs = {tritium.kind = "elementwise", tritium.tile = [8]} {
      ^bb0(%v40: f32, %v37: f32):
        %v41 = arith.mulf %v40, %v19 fastmath<contract> : f32
        %v42 = arith.addf %v41, %v33 fastmath<contract> : f32
        linalg.yield %v42 : f32
      } -> tensor<32xf32>
      bufferization.materialize_in_destination %v36 in restrict writable %v34 : (tensor<32xf32>, memref<32xf32, strided<[1], offset: ?>>) -> ()
      scf.yield
    } {tritium.parallel}
    scf.yield
  }
  return
}
