//go:build masscuda

package device

// #include <cuda.h>
// static CUresult mass_set_max_dyn_smem(void* fn, int bytes) {
//     return cuFuncSetAttribute((CUfunction)fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
// }
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// setMaxDynamicSmem raises a kernel's dynamic shared-memory limit above the default 48 KB.
// gorgonia.org/cu has no wrapper for cuFuncSetAttribute; its Function holds only the
// CUfunction handle, which is read here.
func setMaxDynamicSmem(fn cu.Function, bytes int) error {
	h := *(*unsafe.Pointer)(unsafe.Pointer(&fn))
	if r := C.mass_set_max_dyn_smem(h, C.int(bytes)); r != C.CUDA_SUCCESS {
		return fmt.Errorf("cuFuncSetAttribute(max dynamic smem %d): CUresult %d", bytes, int(r))
	}
	return nil
}
