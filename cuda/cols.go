package cuda

// CopyCols is the reference for copy_cols_f32: rows × n values from src (row stride
// srcStride, starting at column srcOff) into dst (row stride dstStride, column dstOff).
func CopyCols(dst []float32, dstStride, dstOff int, src []float32, srcStride, srcOff, rows, n int) {
	for r := 0; r < rows; r++ {
		copy(dst[r*dstStride+dstOff:r*dstStride+dstOff+n], src[r*srcStride+srcOff:r*srcStride+srcOff+n])
	}
}
