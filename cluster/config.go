package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The cluster config file is Redis's nodes.conf: one CLUSTER NODES line per
// node, then "vars currentEpoch N lastVoteEpoch M" (Keyhive adds its shard
// id to that line). It is replaced whole (temporary file, fsync, rename,
// directory fsync), so a crash leaves the old file or the new one.

// saveConfig writes the config file.
func (s *State) saveConfig() error {
	var b []byte
	for _, n := range s.sortedNodes() {
		if n.Flags&FlagHandshake != 0 {
			continue
		}
		b = s.describe(b, n)
		b = append(b, '\n')
	}
	b = fmt.Appendf(b, "vars currentEpoch %d lastVoteEpoch %d myShardId %s\n", s.currentEpoch, s.lastVote, s.myself.ShardID)
	path := s.opt.ConfigFile
	tmp, err := os.CreateTemp(filepath.Dir(path), "temp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// loadConfig reads the config file; false when there is none.
func (s *State) loadConfig() (bool, error) {
	data, err := os.ReadFile(s.opt.ConfigFile)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(strings.TrimSpace(string(data))) == 0) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	bad := func(line string) error {
		return fmt.Errorf("unrecoverable error: corrupted cluster config file %q at line %q", s.opt.ConfigFile, line)
	}
	type pending struct {
		slot    int
		name    string
		migrate bool
	}
	var open []pending
	masters := map[*Node]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "vars" {
			for i := 1; i+1 < len(f); i += 2 {
				switch f[i] {
				case "currentEpoch":
					s.currentEpoch, _ = strconv.ParseUint(f[i+1], 10, 64)
				case "lastVoteEpoch":
					s.lastVote, _ = strconv.ParseUint(f[i+1], 10, 64)
				case "myShardId":
					if s.myself != nil {
						s.myself.ShardID = f[i+1]
					}
				}
			}
			continue
		}
		if len(f) < 8 || len(f[0]) != NameLen {
			return false, bad(line)
		}
		n := s.nodes[f[0]]
		if n == nil {
			n = s.newNode(f[0], 0)
			s.addNode(n)
		}
		addr, host, _ := strings.Cut(f[1], ",")
		n.Hostname = host
		hostPort, cport, ok := strings.Cut(addr, "@")
		i := strings.LastIndexByte(hostPort, ':')
		if !ok || i < 0 {
			return false, bad(line)
		}
		n.IP = hostPort[:i]
		n.Port, _ = strconv.Atoi(hostPort[i+1:])
		n.CPort, _ = strconv.Atoi(cport)
		n.Flags = parseFlags(f[2])
		if n.Flags&FlagMyself != 0 {
			s.myself = n
			n.ShardID = randomName()
		}
		if f[3] != "-" {
			masters[n] = f[3]
		}
		n.ConfigEpoch, _ = strconv.ParseUint(f[6], 10, 64)
		n.Flags &^= FlagPFail // a restarted node sees for itself
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				body := strings.Trim(r, "[]")
				if a, b, ok := strings.Cut(body, "->-"); ok {
					slot, _ := strconv.Atoi(a)
					open = append(open, pending{slot, b, true})
				} else if a, b, ok := strings.Cut(body, "-<-"); ok {
					slot, _ := strconv.Atoi(a)
					open = append(open, pending{slot, b, false})
				}
				continue
			}
			lo, hi, isRange := strings.Cut(r, "-")
			start, err1 := strconv.Atoi(lo)
			end := start
			var err2 error
			if isRange {
				end, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil || start < 0 || end >= SlotCount || start > end {
				return false, bad(line)
			}
			for slot := start; slot <= end; slot++ {
				s.addSlot(n, slot)
			}
		}
	}
	if s.myself == nil {
		return false, fmt.Errorf("unrecoverable error: myself node not found in cluster config file %q", s.opt.ConfigFile)
	}
	for n, name := range masters {
		n.Master = s.nodes[name]
	}
	for _, p := range open {
		target := s.nodes[p.name]
		if target == nil {
			continue
		}
		if p.migrate {
			s.migrating[p.slot] = target
		} else {
			s.importing[p.slot] = target
		}
	}
	s.logf("Node configuration loaded, I'm %.40s", s.myself.Name)
	s.dirtyConfig = false
	return true, nil
}
