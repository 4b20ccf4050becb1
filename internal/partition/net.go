// Package partition runs servers in network namespaces, each joined to
// every other and to the clients by a link of its own, cuts links and
// heals them, and records every write a client saw acknowledged: the
// harness that checks what a cluster or a Sentinel-managed group keeps
// through a network partition. It needs Linux, root and ip(8) (iproute2);
// Available says why not.
//
// Each host has one address (on its loopback) that every peer and client
// reaches through the direct link to it, so any set of pairs can be cut:
// a host from everyone, a minority from a majority, one replica from its
// master only.
package partition

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Available says why this machine cannot create namespaces ("" when it can).
func Available() string {
	if runtime.GOOS != "linux" {
		return "network namespaces are Linux's"
	}
	if os.Geteuid() != 0 {
		return "creating network namespaces needs root"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "ip(8) (iproute2) not found"
	}
	return ""
}

// namePrefix starts every namespace and link this package creates; the
// creator's pid follows, so a sweep can tell the leftovers of a dead run.
const namePrefix = "khp"

// Net is a set of hosts, a link between every two of them and one from
// each to the caller's namespace (the clients' side, whose address in
// the subnet is .1).
type Net struct {
	id     string // namePrefix + pid + a letter
	subnet string // "10.a.b": a /24 no interface here uses
	hosts  []*Host
	links  map[[2]int]*link // by host index pair, -1 for the clients' side
}

// Host is a network namespace with an address of its own.
type Host struct {
	NS    string
	IP    string
	index int
}

// link is a veth pair: each end in its namespace ("" for the caller's),
// with the route to the other end's address through it.
type link struct {
	ends [2]end
}

type end struct {
	ns, dev, localIP, peerIP string
}

var (
	mu   sync.Mutex
	nets int // Nets this process made: their names differ by a letter
)

// New makes an empty net, after removing what dead runs left behind.
func New() (*Net, error) {
	if why := Available(); why != "" {
		return nil, errors.New(why)
	}
	sweep()
	mu.Lock()
	nets++
	seq := nets
	mu.Unlock()
	subnet, err := freeSubnet()
	if err != nil {
		return nil, err
	}
	n := &Net{id: fmt.Sprintf("%s%d%c", namePrefix, os.Getpid(), 'a'+seq%26), subnet: subnet, links: map[[2]int]*link{}}
	// The clients' address, on a device of the net's own (an empty bridge:
	// this kernel has no dummy devices) so that Close removes it with it.
	if err := runAll(
		[]string{"ip", "link", "add", n.id, "type", "bridge"},
		[]string{"ip", "addr", "add", n.subnet + ".1/32", "dev", n.id},
		[]string{"ip", "link", "set", n.id, "up"},
	); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// freeSubnet picks a /24 in 10.200-249.x that no interface here uses (the
// nets of other test processes included).
func freeSubnet() (string, error) {
	out, err := exec.Command("ip", "-o", "-4", "addr").Output()
	if err != nil {
		return "", err
	}
	for range 1000 {
		subnet := fmt.Sprintf("10.%d.%d", 200+rand.IntN(50), rand.IntN(256))
		if !strings.Contains(string(out), " "+subnet+".") {
			return subnet, nil
		}
	}
	return "", errors.New("no free 10.x.y.0/24 subnet")
}

// AddHost creates a namespace linked to the clients' side and to every
// host made before it.
func (n *Net) AddHost() (*Host, error) {
	i := len(n.hosts)
	h := &Host{NS: fmt.Sprintf("%s-%d", n.id, i), IP: fmt.Sprintf("%s.%d", n.subnet, 10+i), index: i}
	if err := run("ip", "netns", "add", h.NS); err != nil {
		return nil, err
	}
	n.hosts = append(n.hosts, h)
	if err := runAll(
		[]string{"ip", "-n", h.NS, "addr", "add", h.IP + "/32", "dev", "lo"},
		[]string{"ip", "-n", h.NS, "link", "set", "lo", "up"},
	); err != nil {
		return nil, err
	}
	clients := &link{ends: [2]end{
		{ns: "", dev: fmt.Sprintf("%sh%d", n.id, i), localIP: n.subnet + ".1", peerIP: h.IP},
		{ns: h.NS, dev: "clients", localIP: h.IP, peerIP: n.subnet + ".1"},
	}}
	if err := clients.create(); err != nil {
		return nil, err
	}
	n.links[[2]int{-1, i}] = clients
	for _, o := range n.hosts[:i] {
		l := &link{ends: [2]end{
			{ns: o.NS, dev: "to" + strconv.Itoa(i), localIP: o.IP, peerIP: h.IP},
			{ns: h.NS, dev: "to" + strconv.Itoa(o.index), localIP: h.IP, peerIP: o.IP},
		}}
		if err := l.create(); err != nil {
			return nil, err
		}
		n.links[[2]int{o.index, i}] = l
	}
	return h, nil
}

func (l *link) create() error {
	a, b := l.ends[0], l.ends[1]
	add := []string{"ip"}
	if a.ns != "" {
		add = append(add, "-n", a.ns)
	}
	add = append(add, "link", "add", a.dev, "type", "veth", "peer", "name", b.dev, "netns", b.ns)
	if err := run(add[0], add[1:]...); err != nil {
		return err
	}
	return l.up()
}

// up brings both ends up and routes through them again (taking a link
// down drops its routes).
func (l *link) up() error {
	for _, e := range l.ends {
		if err := runAll(
			e.ip("link", "set", e.dev, "up"),
			e.ip("route", "replace", e.peerIP+"/32", "dev", e.dev, "src", e.localIP),
		); err != nil {
			return err
		}
	}
	return nil
}

// down takes both ends down: what was in flight is lost, as when a cable
// or a switch fails, and nothing is refused.
func (l *link) down() error {
	return runAll(l.ends[0].ip("link", "set", l.ends[0].dev, "down"), l.ends[1].ip("link", "set", l.ends[1].dev, "down"))
}

func (e end) ip(args ...string) []string {
	if e.ns == "" {
		return append([]string{"ip"}, args...)
	}
	return append([]string{"ip", "-n", e.ns}, args...)
}

// linksOf lists h's links: to the clients and to every other host.
func (n *Net) linksOf(h *Host) []*link {
	var ls []*link
	for k, l := range n.links {
		if k[0] == h.index || k[1] == h.index {
			ls = append(ls, l)
		}
	}
	return ls
}

func (n *Net) pair(a, b *Host) *link {
	i, j := min(a.index, b.index), max(a.index, b.index)
	return n.links[[2]int{i, j}]
}

// Cut isolates h from every host and from the clients.
func (n *Net) Cut(h *Host) error {
	for _, l := range n.linksOf(h) {
		if err := l.down(); err != nil {
			return err
		}
	}
	return nil
}

// Heal restores every link of h.
func (n *Net) Heal(h *Host) error {
	for _, l := range n.linksOf(h) {
		if err := l.up(); err != nil {
			return err
		}
	}
	return nil
}

// HealExcept restores every link of h but those to the hosts in still.
func (n *Net) HealExcept(h *Host, still ...*Host) error {
	for _, l := range n.linksOf(h) {
		skip := false
		for _, o := range still {
			skip = skip || l == n.pair(h, o)
		}
		if !skip {
			if err := l.up(); err != nil {
				return err
			}
		}
	}
	return nil
}

// CutPair cuts the link between a and b only.
func (n *Net) CutPair(a, b *Host) error { return n.pair(a, b).down() }

// HealPair restores the link between a and b.
func (n *Net) HealPair(a, b *Host) error { return n.pair(a, b).up() }

// Close removes the hosts and their links (a namespace's processes must
// be gone first: Proc.Kill).
func (n *Net) Close() {
	for k, l := range n.links {
		if k[0] == -1 {
			run("ip", "link", "del", l.ends[0].dev) // at once: a namespace's links go in the background
		}
	}
	for _, h := range n.hosts {
		run("ip", "netns", "del", h.NS)
	}
	run("ip", "link", "del", n.id)
}

// sweep removes the namespaces and links of runs whose process is gone
// (a test binary killed by its timeout does not clean up).
func sweep() {
	dead := func(name string) bool {
		rest, ok := strings.CutPrefix(name, namePrefix)
		if !ok {
			return false
		}
		digits := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if digits < 0 {
			digits = len(rest)
		}
		pid, err := strconv.Atoi(rest[:digits])
		if err != nil {
			return false
		}
		_, err = os.Stat("/proc/" + strconv.Itoa(pid))
		return err != nil
	}
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 && dead(f[0]) {
				run("ip", "netns", "del", f[0])
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link", "show").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 1 {
				name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
				if dead(name) {
					run("ip", "link", "del", name)
				}
			}
		}
	}
}

func run(name string, args ...string) error {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func runAll(cmds ...[]string) error {
	for _, c := range cmds {
		if err := run(c[0], c[1:]...); err != nil {
			return err
		}
	}
	return nil
}
