#include "textflag.h"

// func gemm6x16(k int, x *float32, ldx int, w *float32, b *float32, dst *float32, ldd int)
//
// Six rows of x (k values each, ldx apart) times one packed panel w
// (k × 16), plus b, into six rows of dst (ldd apart), 16 columns each.
// Twelve accumulators (Y0–Y11: row i in Y(2i), Y(2i+1)), two weight
// vectors (Y12, Y13) and two broadcast inputs (Y14, Y15): the sixteen
// AVX registers, nothing spilled. Each row's sums start from the bias and
// add the products in k order, as matmulGo and matmulAVX2 do.
TEXT ·gemm6x16(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ x+8(FP), R8
	MOVQ ldx+16(FP), R9
	SHLQ $2, R9
	MOVQ w+24(FP), DI
	MOVQ b+32(FP), SI
	MOVQ dst+40(FP), DX
	MOVQ ldd+48(FP), R11
	SHLQ $2, R11
	LEAQ (R8)(R9*2), R10
	ADDQ R9, R10

	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y1, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y1, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y1, Y7
	VMOVAPS Y0, Y8
	VMOVAPS Y1, Y9
	VMOVAPS Y0, Y10
	VMOVAPS Y1, Y11
	TESTQ CX, CX
	JLE   store

loop:
	VMOVUPS      (DI), Y12
	VMOVUPS      32(DI), Y13
	VBROADCASTSS (R8), Y14
	VFMADD231PS  Y12, Y14, Y0
	VFMADD231PS  Y13, Y14, Y1
	VBROADCASTSS (R8)(R9*1), Y15
	VFMADD231PS  Y12, Y15, Y2
	VFMADD231PS  Y13, Y15, Y3
	VBROADCASTSS (R8)(R9*2), Y14
	VFMADD231PS  Y12, Y14, Y4
	VFMADD231PS  Y13, Y14, Y5
	VBROADCASTSS (R10), Y15
	VFMADD231PS  Y12, Y15, Y6
	VFMADD231PS  Y13, Y15, Y7
	VBROADCASTSS (R10)(R9*1), Y14
	VFMADD231PS  Y12, Y14, Y8
	VFMADD231PS  Y13, Y14, Y9
	VBROADCASTSS (R10)(R9*2), Y15
	VFMADD231PS  Y12, Y15, Y10
	VFMADD231PS  Y13, Y15, Y11
	ADDQ         $64, DI
	ADDQ         $4, R8
	ADDQ         $4, R10
	DECQ         CX
	JNZ          loop

store:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ    R11, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    R11, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R11, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ    R11, DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ    R11, DX
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	VZEROUPPER
	RET

// func gemm6x32(k int, x *float32, ldx int, w *float32, b *float32, dst *float32, ldd int)
//
// gemm6x16 for two adjacent packed panels at once, in AVX-512 registers:
// six rows of x (k values each, ldx apart) times the panel w (k × 16)
// and the one after it (w + k·16), plus b[:32], into six rows of dst
// (ldd apart), 32 columns each. Twelve accumulators (Z0–Z11: row i in
// Z(2i) for the first panel, Z(2i+1) for the second), two weight vectors
// (Z12, Z13), six broadcast inputs (Z14–Z19). Each lane starts from the
// bias and adds the products in k order with fused multiply-adds, as
// gemm6x16 does: the results are the same bits.
TEXT ·gemm6x32(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ x+8(FP), R8
	MOVQ ldx+16(FP), R9
	SHLQ $2, R9
	MOVQ w+24(FP), DI
	MOVQ b+32(FP), SI
	MOVQ dst+40(FP), DX
	MOVQ ldd+48(FP), R11
	SHLQ $2, R11
	LEAQ (R8)(R9*2), R10
	ADDQ R9, R10
	MOVQ CX, BX
	SHLQ $6, BX

	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVAPS Z0, Z2
	VMOVAPS Z1, Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z1, Z5
	VMOVAPS Z0, Z6
	VMOVAPS Z1, Z7
	VMOVAPS Z0, Z8
	VMOVAPS Z1, Z9
	VMOVAPS Z0, Z10
	VMOVAPS Z1, Z11
	TESTQ CX, CX
	JLE   store32

loop32:
	VMOVUPS      (DI), Z12
	VMOVUPS      (DI)(BX*1), Z13
	VBROADCASTSS (R8), Z14
	VBROADCASTSS (R8)(R9*1), Z15
	VBROADCASTSS (R8)(R9*2), Z16
	VBROADCASTSS (R10), Z17
	VBROADCASTSS (R10)(R9*1), Z18
	VBROADCASTSS (R10)(R9*2), Z19
	VFMADD231PS  Z12, Z14, Z0
	VFMADD231PS  Z13, Z14, Z1
	VFMADD231PS  Z12, Z15, Z2
	VFMADD231PS  Z13, Z15, Z3
	VFMADD231PS  Z12, Z16, Z4
	VFMADD231PS  Z13, Z16, Z5
	VFMADD231PS  Z12, Z17, Z6
	VFMADD231PS  Z13, Z17, Z7
	VFMADD231PS  Z12, Z18, Z8
	VFMADD231PS  Z13, Z18, Z9
	VFMADD231PS  Z12, Z19, Z10
	VFMADD231PS  Z13, Z19, Z11
	ADDQ         $64, DI
	ADDQ         $4, R8
	ADDQ         $4, R10
	DECQ         CX
	JNZ          loop32

store32:
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ    R11, DX
	VMOVUPS Z2, (DX)
	VMOVUPS Z3, 64(DX)
	ADDQ    R11, DX
	VMOVUPS Z4, (DX)
	VMOVUPS Z5, 64(DX)
	ADDQ    R11, DX
	VMOVUPS Z6, (DX)
	VMOVUPS Z7, 64(DX)
	ADDQ    R11, DX
	VMOVUPS Z8, (DX)
	VMOVUPS Z9, 64(DX)
	ADDQ    R11, DX
	VMOVUPS Z10, (DX)
	VMOVUPS Z11, 64(DX)
	VZEROUPPER
	RET

// func gemm6x16h(k int, x *float32, ldx int, w *uint16, b *float32, dst *float32, ldd int)
//
// gemm6x16 for a panel of float16 weights (k × 16, 32 bytes a row),
// widened to float32 as they are loaded (F16C): the same sums of the same
// values in the same order as gemm6x16 on the widened panel.
TEXT ·gemm6x16h(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ x+8(FP), R8
	MOVQ ldx+16(FP), R9
	SHLQ $2, R9
	MOVQ w+24(FP), DI
	MOVQ b+32(FP), SI
	MOVQ dst+40(FP), DX
	MOVQ ldd+48(FP), R11
	SHLQ $2, R11
	LEAQ (R8)(R9*2), R10
	ADDQ R9, R10

	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y1, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y1, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y1, Y7
	VMOVAPS Y0, Y8
	VMOVAPS Y1, Y9
	VMOVAPS Y0, Y10
	VMOVAPS Y1, Y11
	TESTQ CX, CX
	JLE   storeh16

looph16:
	VCVTPH2PS    (DI), Y12
	VCVTPH2PS    16(DI), Y13
	VBROADCASTSS (R8), Y14
	VFMADD231PS  Y12, Y14, Y0
	VFMADD231PS  Y13, Y14, Y1
	VBROADCASTSS (R8)(R9*1), Y15
	VFMADD231PS  Y12, Y15, Y2
	VFMADD231PS  Y13, Y15, Y3
	VBROADCASTSS (R8)(R9*2), Y14
	VFMADD231PS  Y12, Y14, Y4
	VFMADD231PS  Y13, Y14, Y5
	VBROADCASTSS (R10), Y15
	VFMADD231PS  Y12, Y15, Y6
	VFMADD231PS  Y13, Y15, Y7
	VBROADCASTSS (R10)(R9*1), Y14
	VFMADD231PS  Y12, Y14, Y8
	VFMADD231PS  Y13, Y14, Y9
	VBROADCASTSS (R10)(R9*2), Y15
	VFMADD231PS  Y12, Y15, Y10
	VFMADD231PS  Y13, Y15, Y11
	ADDQ         $32, DI
	ADDQ         $4, R8
	ADDQ         $4, R10
	DECQ         CX
	JNZ          looph16

storeh16:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ    R11, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    R11, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R11, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ    R11, DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ    R11, DX
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	VZEROUPPER
	RET

// func gemm6x32h(k int, x *float32, ldx int, w *uint16, b *float32, dst *float32, ldd int)
//
// gemm6x32 for two adjacent panels of float16 weights (the second at
// w + k·16), widened to float32 as they are loaded: the same sums of the
// same values in the same order as gemm6x32 on the widened panels.
TEXT ·gemm6x32h(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ x+8(FP), R8
	MOVQ ldx+16(FP), R9
	SHLQ $2, R9
	MOVQ w+24(FP), DI
	MOVQ b+32(FP), SI
	MOVQ dst+40(FP), DX
	MOVQ ldd+48(FP), R11
	SHLQ $2, R11
	LEAQ (R8)(R9*2), R10
	ADDQ R9, R10
	MOVQ CX, BX
	SHLQ $5, BX

	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVAPS Z0, Z2
	VMOVAPS Z1, Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z1, Z5
	VMOVAPS Z0, Z6
	VMOVAPS Z1, Z7
	VMOVAPS Z0, Z8
	VMOVAPS Z1, Z9
	VMOVAPS Z0, Z10
	VMOVAPS Z1, Z11
	TESTQ CX, CX
	JLE   storeh32

looph32:
	VCVTPH2PS    (DI), Z12
	VCVTPH2PS    (DI)(BX*1), Z13
	VBROADCASTSS (R8), Z14
	VBROADCASTSS (R8)(R9*1), Z15
	VBROADCASTSS (R8)(R9*2), Z16
	VBROADCASTSS (R10), Z17
	VBROADCASTSS (R10)(R9*1), Z18
	VBROADCASTSS (R10)(R9*2), Z19
	VFMADD231PS  Z12, Z14, Z0
	VFMADD231PS  Z13, Z14, Z1
	VFMADD231PS  Z12, Z15, Z2
	VFMADD231PS  Z13, Z15, Z3
	VFMADD231PS  Z12, Z16, Z4
	VFMADD231PS  Z13, Z16, Z5
	VFMADD231PS  Z12, Z17, Z6
	VFMADD231PS  Z13, Z17, Z7
	VFMADD231PS  Z12, Z18, Z8
	VFMADD231PS  Z13, Z18, Z9
	VFMADD231PS  Z12, Z19, Z10
	VFMADD231PS  Z13, Z19, Z11
	ADDQ         $32, DI
	ADDQ         $4, R8
	ADDQ         $4, R10
	DECQ         CX
	JNZ          looph32

storeh32:
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ    R11, DX
	VMOVUPS Z2, (DX)
	VMOVUPS Z3, 64(DX)
	ADDQ    R11, DX
	VMOVUPS Z4, (DX)
	VMOVUPS Z5, 64(DX)
	ADDQ    R11, DX
	VMOVUPS Z6, (DX)
	VMOVUPS Z7, 64(DX)
	ADDQ    R11, DX
	VMOVUPS Z8, (DX)
	VMOVUPS Z9, 64(DX)
	ADDQ    R11, DX
	VMOVUPS Z10, (DX)
	VMOVUPS Z11, 64(DX)
	VZEROUPPER
	RET
