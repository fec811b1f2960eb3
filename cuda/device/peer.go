//go:build masscuda || masscudaemu

package device

import (
	"fmt"
)

// CopyPeer copies bytes from src's device pointer sp to dst's device pointer dp with the
// driver's peer copy (cuMemcpyPeerAsync on src's compute stream; the driver routes it over
// NVLink/PCIe peer access where the devices have it and stages it otherwise) and returns
// once the bytes have landed. Ordering: dst's stream is synchronized first, so no earlier
// work on dst still reads or writes dp; src's work before the call is ordered before the
// copy by its stream; the copy is complete on return, so dst's later work sees it. dst and
// src must be different devices, and the call must not be made from inside Do of either.
func CopyPeer(dst *Device, dp uintptr, src *Device, sp uintptr, bytes int64) error {
	if dst == src {
		return fmt.Errorf("peer copy within one device: use Exec.Copy")
	}
	if bytes == 0 {
		return nil
	}
	if err := dst.Do(func(x *Exec) error { return x.Sync() }); err != nil {
		return err
	}
	err := src.Do(func(x *Exec) error {
		if err := x.drv.peer(dp, dst.x.drv, sp, bytes, x.compute); err != nil {
			return err
		}
		return x.Sync()
	})
	if err != nil {
		return fmt.Errorf("peer copy of %d bytes from device %d to %d: %w", bytes, src.x.Info.Ordinal, dst.x.Info.Ordinal, err)
	}
	return nil
}
