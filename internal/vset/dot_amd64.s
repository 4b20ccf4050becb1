#include "textflag.h"

// func dotQ8AVX2(a, b *int8, n int) int32
// n is a multiple of 16: each step widens 16 bytes of each vector to
// 16-bit lanes and multiply-adds them pairwise into eight 32-bit sums.
TEXT ·dotQ8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y4, Y4, Y4

loop32:
	CMPQ CX, $32
	JL   tail16
	VPMOVSXBW (SI), Y1
	VPMOVSXBW (DI), Y2
	VPMADDWD  Y1, Y2, Y3
	VPADDD    Y3, Y0, Y0
	VPMOVSXBW 16(SI), Y5
	VPMOVSXBW 16(DI), Y6
	VPMADDWD  Y5, Y6, Y7
	VPADDD    Y7, Y4, Y4
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JMP       loop32

tail16:
	CMPQ CX, $16
	JL   done
	VPMOVSXBW (SI), Y1
	VPMOVSXBW (DI), Y2
	VPMADDWD  Y1, Y2, Y3
	VPADDD    Y3, Y0, Y0

done:
	VPADDD       Y4, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET

// func dotF32AVX(a, b *float32, n int) float32
// n is a multiple of 8: eight lanes each sum their products in order,
// then the lanes are added as dotF32Go adds them, so the result is the
// same to the bit.
TEXT ·dotF32AVX(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0

loop8:
	CMPQ    CX, $8
	JL      sum
	VMOVUPS (SI), Y1
	VMULPS  (DI), Y1, Y1
	VADDPS  Y1, Y0, Y0
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop8

sum:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET
