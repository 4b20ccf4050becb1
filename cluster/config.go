package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The cluster config file is Redis's nodes.conf: one CLUSTER NODES line per
// node, then "vars currentEpoch N lastVoteEpoch M" (Keyhive adds its shard
// id to that line). It is replaced whole (temporary file, fsync, rename,
// directory fsync), so a crash leaves the old file or the new one. The
// changes of the bus and of commands are written by the saver goroutine,
// the latest state only, so nothing waits for the disk holding the lock.
// After a save the saver waits saveInterval: the changes made meanwhile go
// to disk together. A resharding sends about five SETSLOTs per slot, and a
// save each (two fsyncs and a rename) cost Keyhive more than the commands
// (bench/reshard.sh); a lone change is still written at once.

// saveInterval is the least time between two saves of the saver.
const saveInterval = 10 * time.Millisecond

// configSaver is the state of the goroutine that writes the config.
type configSaver struct {
	wake    chan struct{} // capacity 1: a change waits for the saver
	unsaved bool          // a change no snapshot holds yet (under the state's lock)
	mu      sync.Mutex    // one writer at a time
	written uint64        // the sequence number last written
	seq     uint64        // the last snapshot's (under the state's lock)
}

type configSnapshot struct {
	seq  uint64
	data []byte
}

// configBytes is the config file's content.
func (s *State) configBytes() []byte {
	var b []byte
	for _, n := range s.sortedNodes() {
		if n.Flags&FlagHandshake != 0 {
			continue
		}
		b = s.describe(b, n)
		b = append(b, '\n')
	}
	return fmt.Appendf(b, "vars currentEpoch %d lastVoteEpoch %d myShardId %s\n", s.currentEpoch, s.lastVote, s.myself.ShardID)
}

// snapshot takes the config to write, under the state's lock.
func (s *State) snapshot() configSnapshot {
	s.saver.seq++
	s.saver.unsaved = false
	return configSnapshot{s.saver.seq, s.configBytes()}
}

// queueSave tells the saver the config changed (under the state's lock).
func (s *State) queueSave() {
	s.saver.unsaved = true
	select {
	case s.saver.wake <- struct{}{}:
	default:
	}
}

// saveLoop writes the config after changes until the bus stops.
func (s *State) saveLoop() {
	defer s.wg.Done()
	pause := time.NewTimer(0)
	<-pause.C
	for {
		select {
		case <-s.done:
			return
		case <-s.saver.wake:
		}
		s.lock()
		if !s.saver.unsaved {
			s.unlock()
			continue
		}
		snap := s.snapshot()
		s.unlock()
		s.writeSnapshot(snap)
		pause.Reset(saveInterval)
		select {
		case <-s.done:
			pause.Stop()
			return
		case <-pause.C:
		}
	}
}

// flushSave writes the changes not written yet (at Close).
func (s *State) flushSave() {
	s.lock()
	if !s.saver.unsaved {
		s.unlock()
		return
	}
	snap := s.snapshot()
	s.unlock()
	s.writeSnapshot(snap)
}

func (s *State) writeSnapshot(snap configSnapshot) {
	s.saver.mu.Lock()
	defer s.saver.mu.Unlock()
	if snap.seq <= s.saver.written {
		return
	}
	if err := writeFileAtomic(s.opt.ConfigFile, snap.data); err != nil {
		s.logf("Could not save the cluster config: %v", err)
		return
	}
	s.saver.written = snap.seq
}

// saveConfigNow writes the config file before returning (at start and for
// CLUSTER SAVECONFIG), under the state's lock.
func (s *State) saveConfigNow() error {
	snap := s.snapshot()
	s.saver.mu.Lock()
	defer s.saver.mu.Unlock()
	if err := writeFileAtomic(s.opt.ConfigFile, snap.data); err != nil {
		s.saver.unsaved = true // still to write
		return err
	}
	s.saver.written = snap.seq
	return nil
}

// writeFileAtomic replaces path with data: a synced temporary file renamed
// over it, then the directory synced.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "temp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
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
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
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
			s.setMigrating(p.slot, target)
		} else {
			s.setImporting(p.slot, target)
		}
	}
	s.logf("Node configuration loaded, I'm %.40s", s.myself.Name)
	s.dirtyConfig = false
	return true, nil
}
