//go:build !amd64

package minilm

// float32Kernel is the name of the float32 kernels chosen with k's.
func float32Kernel(k kernelSet) string { return k.kernel }

// avx2Kernels: there are AVX2 kernels on amd64 only.
func avx2Kernels(k kernelSet) (kernelSet, bool) { return k, false }

// halfKernels: the float16 assembly kernels are amd64's.
func halfKernels() []namedHalf { return nil }
