package vset

import "math/rand/v2"

// EmbeddingLike returns n vectors of dim components with the structure
// of learned embeddings: random points of a latent space of few
// dimensions (Gaussian), mapped by a fixed random matrix, plus a little
// Gaussian noise in every dimension; the same for the same seed. The
// recall test and bench/memory -vset measure on them: uniformly random
// vectors have none of the structure real embeddings have (TestRecall).
func EmbeddingLike(n, dim, latent int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 3))
	basis := make([]float32, latent*dim)
	for i := range basis {
		basis[i] = float32(r.NormFloat64())
	}
	out := make([][]float32, n)
	z := make([]float32, latent)
	for i := range out {
		for j := range z {
			z[j] = float32(r.NormFloat64())
		}
		v := make([]float32, dim)
		for j := range v {
			var s float32
			for k := range z {
				s += z[k] * basis[k*dim+j]
			}
			v[j] = s + 0.1*float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}
