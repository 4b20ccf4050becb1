package cmdspec

// Redis 8's t-digest commands (the tdigest group).
func init() {
	ro := func(name, args, complexity, summary string) *Spec {
		return &Spec{Name: name, Arity: -3, Flags: FlagReadonly, ACL: "@read @tdigest",
			Keys: []string{"RO access; index 1; range 0 1 0"}, Args: args,
			Since: "8.0.0", Complexity: complexity, Summary: summary}
	}
	one := func(name, summary string, fast bool) *Spec {
		s := ro(name, "key:key#0", "O(1)", summary)
		s.Arity = 2
		if fast {
			s.Flags |= FlagFast
			s.ACL += " @fast"
		}
		return s
	}
	add("tdigest",
		&Spec{Name: "tdigest.add", Arity: -3, Flags: FlagWrite | FlagDenyOOM, ACL: "@write @tdigest @slow",
			Keys:  []string{"RW update; index 1; range 0 1 0"},
			Args:  "key:key#0 value:double...",
			Since: "8.0.0", Complexity: "O(n), n = the values.",
			Summary: "Adds observations to a t-digest."},
		ro("tdigest.byrank", "key:key#0 rank:double...", "O(n), n = the ranks.", "Returns estimated values at ranks of a t-digest, 0 the smallest."),
		ro("tdigest.byrevrank", "key:key#0 reverse_rank:double...", "O(n), n = the ranks.", "Returns estimated values at ranks of a t-digest, 0 the largest."),
		ro("tdigest.cdf", "key:key#0 value:double...", "O(n), n = the values.", "Returns the estimated fraction of a t-digest's observations at or below values."),
		&Spec{Name: "tdigest.create", Arity: -2, Flags: FlagWrite | FlagDenyOOM, ACL: "@write @tdigest",
			Keys:  []string{"RW insert; index 1; range 0 1 0"},
			Args:  "key:key#0 [COMPRESSION=compression:integer]",
			Since: "8.0.0", Complexity: "O(1)",
			Summary: "Creates an empty t-digest."},
		one("tdigest.info", "Returns a t-digest's parameters and counts.", false),
		one("tdigest.max", "Returns the largest observation of a t-digest.", true),
		&Spec{Name: "tdigest.merge", Arity: -4, Flags: FlagWrite | FlagDenyOOM, ACL: "@write @tdigest @slow",
			Keys:  []string{"RW insert; index 1; range 0 1 0", "RO access; index 2; keynum 0 1 1"},
			Args:  "destination-key:key#0 numkeys:integer source-key:key#1... [config:{COMPRESSION=compression:integer}] [OVERRIDE]",
			Since: "8.0.0", Complexity: "O(n * k), n = the centroids, k = the sketches.",
			Summary: "Merges t-digests into one."},
		one("tdigest.min", "Returns the smallest observation of a t-digest.", true),
		ro("tdigest.quantile", "key:key#0 quantile:double...", "O(n), n = the quantiles.", "Returns estimated values at fractions of a t-digest's observations."),
		ro("tdigest.rank", "key:key#0 value:double...", "O(n), n = the values.", "Returns the estimated ranks of values in a t-digest."),
		&Spec{Name: "tdigest.reset", Arity: 2, Flags: FlagWrite | FlagFast, ACL: "@write @tdigest @fast",
			Keys:  []string{"RW update; index 1; range 0 1 0"},
			Args:  "key:key#0",
			Since: "8.0.0", Complexity: "O(1)",
			Summary: "Empties a t-digest, keeping its compression."},
		ro("tdigest.revrank", "key:key#0 value:double...", "O(n), n = the values.", "Returns the estimated reverse ranks of values in a t-digest."),
		&Spec{Name: "tdigest.trimmed_mean", Arity: 4, Flags: FlagReadonly, ACL: "@read @tdigest",
			Keys:  []string{"RO access; index 1; range 0 1 0"},
			Args:  "key:key#0 low_cut_quantile:double high_cut_quantile:double",
			Since: "8.0.0", Complexity: "O(n), n = the centroids.",
			Summary: "Returns the mean of a t-digest's observations between two quantiles."},
	)
}
