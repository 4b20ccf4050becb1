package server_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Redis 8.2's INFO replication fields of a replica, from "Redis Open Source
// 8.2 release notes", Metrics (https://redis.io/docs/latest/operate/oss_and_stack/stack-with-enterprise/release-notes/redisce/redisos-8.2-release-notes/,
// redis#13990; the INFO page at hand does not list them yet): master_current_sync_attempts (attempts to sync since the
// last disconnection), master_total_sync_attempts (all attempts),
// master_link_up_since_seconds (while the link is up) and
// total_disconnect_time_sec (the time disconnected, in all). They follow
// the sync fields and stand where master_link_down_since_seconds stands
// while the link is down, before slave_priority.

// replicaFields returns INFO replication's field names and values.
func replicaFields(t *testing.T, n *replNode) ([]string, map[string]string) {
	t.Helper()
	var names []string
	values := map[string]string{}
	for _, line := range strings.Split(n.ok(t, "INFO", "replication").Str, "\r\n") {
		if name, v, ok := strings.Cut(line, ":"); ok {
			names = append(names, name)
			values[name] = v
		}
	}
	return names, values
}

// between is the field names after first and before last.
func between(names []string, first, last string) []string {
	i, j := slices.Index(names, first), slices.Index(names, last)
	if i < 0 || j < i {
		return nil
	}
	return names[i+1 : j]
}

func TestReplInfoSyncAttempts(t *testing.T) {
	master, replica := startReplNode(t, false), startReplNode(t, false)
	replicate(t, master, replica)
	names, v := replicaFields(t, replica)
	want := []string{"master_current_sync_attempts", "master_total_sync_attempts", "master_link_up_since_seconds", "total_disconnect_time_sec"}
	if got := between(names, "slave_repl_offset", "slave_priority"); !slices.Equal(got, want) {
		t.Errorf("link up: fields %v, want %v", got, want)
	}
	for name, want := range map[string]string{"master_current_sync_attempts": "1", "master_total_sync_attempts": "1", "total_disconnect_time_sec": "0"} {
		if v[name] != want {
			t.Errorf("first sync: %s:%s, want %s", name, v[name], want)
		}
	}
	if up, err := strconv.Atoi(v["master_link_up_since_seconds"]); err != nil || up < 0 || up > 5 {
		t.Errorf("master_link_up_since_seconds:%s", v["master_link_up_since_seconds"])
	}

	// The master drops the link; the replica reconnects a second later.
	master.ok(t, "CLIENT", "KILL", "TYPE", "replica")
	waitUntil(t, "the link down", func() bool { return replica.info(t, "replication", "master_link_status") == "down" })
	names, v = replicaFields(t, replica)
	if got := between(names, "slave_repl_offset", "slave_priority"); slices.Contains(got, "master_link_up_since_seconds") ||
		!slices.Contains(got, "master_link_down_since_seconds") || got[len(got)-1] != "total_disconnect_time_sec" {
		t.Errorf("link down: fields %v", got)
	}
	if c := v["master_current_sync_attempts"]; c != "0" && c != "1" { // 1 once the next attempt began
		t.Errorf("link down: master_current_sync_attempts:%s", c)
	}
	waitUntil(t, "the link up again", func() bool { return replica.info(t, "replication", "master_link_status") == "up" })
	_, v = replicaFields(t, replica)
	for name, want := range map[string]string{"master_current_sync_attempts": "1", "master_total_sync_attempts": "2"} {
		if v[name] != want {
			t.Errorf("second sync: %s:%s, want %s", name, v[name], want)
		}
	}
	if d, err := strconv.Atoi(v["total_disconnect_time_sec"]); err != nil || d < 0 || d > 10 {
		t.Errorf("second sync: total_disconnect_time_sec:%s", v["total_disconnect_time_sec"])
	}
}
