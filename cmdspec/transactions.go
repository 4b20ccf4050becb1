package cmdspec

func init() {
	add("transactions",
		&Spec{Name: "discard", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy | FlagNotQueued, ACL: "@fast @transaction",
			Since: "2.0.0", Complexity: "O(N), N = the commands queued.",
			Summary: "Drops the commands queued since MULTI."},
		&Spec{Name: "exec", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagSkipSlowlog | FlagNotQueued, ACL: "@slow @transaction",
			Since: "1.2.0", Complexity: "That of the queued commands.",
			Summary: "Runs the commands queued since MULTI, as one."},
		&Spec{Name: "multi", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy | FlagNotQueued, ACL: "@fast @transaction",
			Since: "1.2.0", Complexity: "O(1)",
			Summary: "Starts a transaction: commands are queued until EXEC."},
		&Spec{Name: "unwatch", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, ACL: "@fast @transaction",
			Since: "2.2.0", Complexity: "O(1)",
			Summary: "Forgets every key watched by the connection."},
		&Spec{Name: "watch", Arity: -2, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy | FlagNotQueued, ACL: "@fast @transaction",
			Keys:  []string{"RO; index 1; range -1 1 0"},
			Args:  "key:key#0...",
			Since: "2.2.0", Complexity: "O(1) per key.",
			Summary: "Makes the next EXEC fail if any of the keys changes before it."},
	)
}
