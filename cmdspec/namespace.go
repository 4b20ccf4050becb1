package cmdspec

// NAMESPACE is Keyhive's own command family (no Redis counterpart): the key
// schema of package namespace. DEFINE and DROP change the schema for every
// key, so they take the exclusive lock and propagate, as writes do, to the
// AOF and replicas; so does PROMOTE, as the DEFINE it amounts to. DISCOVER
// shows key prefixes whatever the user's key patterns: @dangerous, as INFO
// (whose namespaces section shows them too).
func init() {
	add("keyhive",
		&Spec{Name: "namespace", Arity: -2, ACL: "@slow",
			Since: "0.9.0", Complexity: "Per subcommand.",
			Summary: "Groups the subcommands that declare and inspect key namespaces (Keyhive).",
			Subcommands: []*Spec{
				{Name: "define", Arity: -5, Flags: FlagWrite | FlagAdmin | FlagNoScript | FlagAllKeys, ACL: "@admin @slow @dangerous",
					Args:  "name:string source:<PREFIX=prefix:string|PATTERN=pattern:pattern> [MAX-KEYS=max-keys:integer] [MAX-MEMORY=max-memory:string] [policy:<REJECT|EVICT=order:string>] [PROTECTED] [REQUIRE-TTL] [DEFAULT-TTL=default-ttl:integer] [MAX-TTL=max-ttl:integer] [TYPES=types:string]",
					Since: "0.9.0", Complexity: "O(N) where N is the number of keys, which are attributed to the new schema once.",
					Summary: "Declares a namespace, or replaces the declaration of that name."},
				{Name: "drop", Arity: 3, Flags: FlagWrite | FlagAdmin | FlagNoScript | FlagAllKeys, ACL: "@admin @slow @dangerous",
					Args:  "name:string",
					Since: "0.9.0", Complexity: "O(N) where N is the number of keys.",
					Summary: "Removes a namespace declaration; its keys stay, in the namespace that now covers them."},
				{Name: "list", Arity: 2, Flags: FlagNoKeyspace | FlagLoading | FlagStale, ACL: "@slow",
					Since: "0.9.0", Complexity: "O(N) where N is the number of namespaces.",
					Summary: "Lists the namespace declarations as DEFINE arguments."},
				{Name: "info", Arity: 3, Flags: FlagNoKeyspace | FlagLoading | FlagStale, ACL: "@slow",
					Args:  "name:string",
					Since: "0.9.0", Complexity: "O(1).",
					Summary: "Returns a namespace's declaration and statistics."},
				{Name: "stats", Arity: 2, Flags: FlagNoKeyspace | FlagLoading | FlagStale, ACL: "@slow",
					Since: "0.9.0", Complexity: "O(N) where N is the number of namespaces.",
					Summary: "Returns every namespace's statistics, the default namespace included."},
				{Name: "reset", Arity: -2, Flags: FlagNoKeyspace | FlagLoading | FlagStale, ACL: "@slow",
					Args:  "[name:string]",
					Since: "0.9.0", Complexity: "O(N) where N is the number of namespaces.",
					Summary: "Zeroes the hit, miss, write, eviction, expiration and refusal counters of one or every namespace."},
				{Name: "discover", Arity: -2, Flags: FlagNoKeyspace | FlagLoading | FlagStale, ACL: "@slow @dangerous",
					Args:  "[DEPTH=depth:integer] [COUNT=count:integer] [BY=figure:<KEYS|VOLATILE|BYTES|READS|WRITES|EVICTIONS|EXPIRATIONS>]",
					Since: "0.9.0", Complexity: "O(C) where C is namespace-discovery-capacity.",
					Summary: "Lists the top key prefixes discovered without declarations, with estimated statistics and their error bounds."},
				{Name: "promote", Arity: -3, Flags: FlagWrite | FlagAdmin | FlagNoScript | FlagAllKeys, ACL: "@admin @slow @dangerous",
					Args:  "prefix:string [NAME=name:string] [MAX-KEYS=max-keys:integer] [MAX-MEMORY=max-memory:string] [policy:<REJECT|EVICT=order:string>] [PROTECTED] [REQUIRE-TTL] [DEFAULT-TTL=default-ttl:integer] [MAX-TTL=max-ttl:integer] [TYPES=types:string]",
					Since: "0.9.0", Complexity: "O(N) where N is the number of keys, which are attributed to the new schema once.",
					Summary: "Declares a discovered prefix as a namespace, as NAMESPACE DEFINE does."},
				{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow",
					Since: "0.9.0", Complexity: "O(1)",
					Summary: "Describes the NAMESPACE subcommands."},
			}},
	)
}
