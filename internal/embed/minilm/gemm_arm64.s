#include "textflag.h"

// func gemm6x16(k int, x *float32, ldx int, w *float32, b *float32, dst *float32, ldd int)
//
// Six rows of x (k values each, ldx apart) times one packed panel w
// (k × 16), plus b, into six rows of dst (ldd apart), 16 columns each:
// the contract of gemm_amd64.s, in NEON. Twenty-four accumulators (V0–V23:
// row i in V(4i)–V(4i+3), four lanes each), the panel's row of 16 weights
// in V24–V27 (one VLD1.P), and each row's x value broadcast into V28 or
// V29 (VLD1R.P, which also steps that row's pointer): 32 vector registers,
// nothing spilled. Each row's sums start from the bias and add the
// products in k order, as matmulGo and matmulNEON do. The inner loop is
// 33 instructions for 96 multiply-adds (24 VFMLA, one panel load, six
// broadcasts, SUBS, BNE). R18 and R26–R30 (reserved) are not touched.
TEXT ·gemm6x16(SB), NOSPLIT, $0-56
	MOVD k+0(FP), R0
	MOVD x+8(FP), R1
	MOVD ldx+16(FP), R2
	LSL  $2, R2
	MOVD w+24(FP), R3
	MOVD b+32(FP), R4
	MOVD dst+40(FP), R5
	MOVD ldd+48(FP), R6
	LSL  $2, R6

	// The other five rows of x.
	ADD R2, R1, R7
	ADD R2, R7, R8
	ADD R2, R8, R9
	ADD R2, R9, R10
	ADD R2, R10, R11

	VLD1 (R4), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1 (R4), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1 (R4), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1 (R4), [V12.S4, V13.S4, V14.S4, V15.S4]
	VLD1 (R4), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1 (R4), [V20.S4, V21.S4, V22.S4, V23.S4]
	CMP  $0, R0
	BLE  store

loop:
	VLD1.P  64(R3), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1R.P 4(R1), [V28.S4]
	VFMLA   V24.S4, V28.S4, V0.S4
	VFMLA   V25.S4, V28.S4, V1.S4
	VFMLA   V26.S4, V28.S4, V2.S4
	VFMLA   V27.S4, V28.S4, V3.S4
	VLD1R.P 4(R7), [V29.S4]
	VFMLA   V24.S4, V29.S4, V4.S4
	VFMLA   V25.S4, V29.S4, V5.S4
	VFMLA   V26.S4, V29.S4, V6.S4
	VFMLA   V27.S4, V29.S4, V7.S4
	VLD1R.P 4(R8), [V28.S4]
	VFMLA   V24.S4, V28.S4, V8.S4
	VFMLA   V25.S4, V28.S4, V9.S4
	VFMLA   V26.S4, V28.S4, V10.S4
	VFMLA   V27.S4, V28.S4, V11.S4
	VLD1R.P 4(R9), [V29.S4]
	VFMLA   V24.S4, V29.S4, V12.S4
	VFMLA   V25.S4, V29.S4, V13.S4
	VFMLA   V26.S4, V29.S4, V14.S4
	VFMLA   V27.S4, V29.S4, V15.S4
	VLD1R.P 4(R10), [V28.S4]
	VFMLA   V24.S4, V28.S4, V16.S4
	VFMLA   V25.S4, V28.S4, V17.S4
	VFMLA   V26.S4, V28.S4, V18.S4
	VFMLA   V27.S4, V28.S4, V19.S4
	VLD1R.P 4(R11), [V29.S4]
	VFMLA   V24.S4, V29.S4, V20.S4
	VFMLA   V25.S4, V29.S4, V21.S4
	VFMLA   V26.S4, V29.S4, V22.S4
	VFMLA   V27.S4, V29.S4, V23.S4
	SUBS    $1, R0
	BNE     loop

store:
	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R5)
	ADD  R6, R5
	VST1 [V4.S4, V5.S4, V6.S4, V7.S4], (R5)
	ADD  R6, R5
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (R5)
	ADD  R6, R5
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (R5)
	ADD  R6, R5
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R5)
	ADD  R6, R5
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R5)
	RET
