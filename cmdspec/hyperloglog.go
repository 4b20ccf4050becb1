package cmdspec

func init() {
	add("hyperloglog",
		&Spec{Name: "pfadd", Arity: -2, Flags: FlagWrite | FlagDenyOOM | FlagFast, Writes: TypeString, ACL: "@write @hyperloglog @fast",
			Keys:  []string{"RW insert; index 1; range 0 1 0"},
			Args:  "key:key#0 [element:string]...",
			Since: "2.8.9", Complexity: "O(1) per element.",
			Summary: "Adds elements to a HyperLogLog."},
		&Spec{Name: "pfcount", Arity: -2, Flags: FlagReadonly | FlagMayReplicate, ACL: "@read @hyperloglog @slow",
			Keys:  []string{"RW access; index 1; range -1 1 0; RW: counting may store the cardinality in the value, and that change is propagated"},
			Args:  "key:key#0...",
			Since: "2.8.9", Complexity: "O(1) for one key; O(N), N = the keys, with larger constants for several.",
			Summary: "Estimates the number of distinct elements of HyperLogLogs."},
		&Spec{Name: "pfdebug", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagAdmin, Writes: TypeString, ACL: "@write @hyperloglog @admin @slow @dangerous",
			Keys:  []string{"RW access; index 2; range 0 1 0"},
			Args:  "subcommand:string key:key#0",
			Since: "2.8.9", Complexity: "Not applicable.", DocFlags: "syscmd",
			Summary: "Internal: inspects a HyperLogLog's registers."},
		&Spec{Name: "pfmerge", Arity: -2, Flags: FlagWrite | FlagDenyOOM, Writes: TypeString, ACL: "@write @hyperloglog @slow",
			Keys:  []string{"RW access insert; index 1; range 0 1 0", "RO access; index 2; range -1 1 0"},
			Args:  "destkey:key#0 sourcekey:key#1...",
			Since: "2.8.9", Complexity: "O(N), N = the HyperLogLogs merged.",
			Summary: "Merges HyperLogLogs into one."},
		&Spec{Name: "pfselftest", Arity: 1, Flags: FlagAdmin, ACL: "@hyperloglog @admin @slow @dangerous",
			Since: "2.8.9", Complexity: "Not applicable.", DocFlags: "syscmd",
			Summary: "Internal: tests the HyperLogLog implementation."},
	)
}
