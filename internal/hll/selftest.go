package hll

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// SelfTest checks the register packing and the estimator (PFSELFTEST): every
// register keeps what was written among its neighbours, and a sparse and a
// dense HLL fed the same elements agree and stay within Redis's error bound.
func SelfTest() error {
	rng := rand.New(rand.NewPCG(1, 2))
	var want [Registers]uint8
	r := make([]byte, DenseSize-HeaderSize)
	for round := 0; round < 10; round++ {
		for i := range want {
			want[i] = uint8(rng.IntN(registerMax + 1))
			setRegister(r, i, want[i])
		}
		for i, w := range want {
			if got := register(r, i); got != w {
				return fmt.Errorf("TESTFAILED Register error at %d: %d != %d", i, got, w)
			}
		}
	}
	sparse := AppendEmpty(nil)
	dense, _ := ToDense(AppendEmpty(nil))
	relErr := 1.04 / math.Sqrt(Registers)
	var buf []byte
	next := 10
	for n := 1; n <= 10000; n++ {
		buf = strconv.AppendInt(buf[:0], int64(n), 10)
		sparse, _, _ = Add(sparse, buf, 3000)
		dense, _, _ = Add(dense, buf, 3000)
		if n != next {
			continue
		}
		next *= 10
		cs, ok := Count(sparse)
		cd, _ := Count(dense)
		if !ok || cs != cd {
			return errors.New("TESTFAILED sparse and dense disagree")
		}
		maxErr := math.Ceil(relErr * 5 * float64(n))
		if n < 10 {
			maxErr = 1
		}
		if math.Abs(float64(cd)-float64(n)) > maxErr {
			return fmt.Errorf("TESTFAILED Too big error. card:%d abserr:%v", n, math.Abs(float64(cd)-float64(n)))
		}
	}
	return nil
}
