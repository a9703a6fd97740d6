package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/interop/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// scenarioTimeout bounds one scenario run, suite and client together.
const scenarioTimeout = 2 * time.Minute

// clientTimeoutMS is the suite's own bound on the client process.
const clientTimeoutMS = "30000"

// suite is one configuration of the conformance CLI.
type suite struct {
	ID          string // stable, alpha, alpha@2026-07-28
	Package     string // npm alias under node_modules
	SpecVersion string // --spec-version, or "" for the suite's inference
}

var suites = []suite{
	{ID: "stable", Package: "conformance-stable"},
	{ID: "alpha", Package: "conformance-alpha"},
	{ID: "alpha@2026-07-28", Package: "conformance-alpha", SpecVersion: "2026-07-28"},
}

// scenario is a client scenario as `conformance list` prints it.
type scenario struct {
	Name string
	Tags []string // spec versions, "draft" or "extension"
}

// result is the outcome of one scenario run.
type result struct {
	Suite, Scenario string
	ExitCode        int
	Success, Failed int // graded checks
	Warnings        int
	Err             error // the run itself failed (timeout, no checks.json)
	Output          string
	Expected        string // reason from expected-failures.txt, if listed
}

func (r result) passed() bool {
	return r.Err == nil && r.ExitCode == 0 && r.Failed == 0 && r.Success > 0
}

func (r result) summary() string {
	switch {
	case r.Err != nil:
		return r.Err.Error()
	case r.Success+r.Failed == 0:
		return "no graded checks"
	default:
		return fmt.Sprintf("%d ok, %d failed, %d warnings, exit %d", r.Success, r.Failed, r.Warnings, r.ExitCode)
	}
}

func TestConformance(t *testing.T) {
	root := testenv.MustRoot(t)
	node := testenv.Node(t)
	clientBin := os.Getenv("CONFORMANCE_CLIENT")
	if clientBin == "" {
		clientBin = testenv.Build(t, "./cmd/conformance-client")
	}
	expected, err := loadExpected(filepath.Join(root, "conformance", "expected-failures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	parallel := 4
	if v := os.Getenv("CONFORMANCE_PARALLEL"); v != "" {
		if parallel, err = strconv.Atoi(v); err != nil || parallel < 1 {
			t.Fatalf("CONFORMANCE_PARALLEL=%q: want a positive integer", v)
		}
	}
	var patterns []string
	if v := os.Getenv("CONFORMANCE_SCENARIOS"); v != "" {
		patterns = strings.Split(v, ",")
	}
	wantSuites := map[string]bool{}
	if v := os.Getenv("CONFORMANCE_SUITES"); v != "" {
		for _, s := range strings.Split(v, ",") {
			wantSuites[strings.TrimSpace(s)] = true
		}
	}

	type job struct {
		s  suite
		sc scenario
	}
	var jobs []job
	for _, s := range suites {
		if len(wantSuites) > 0 && !wantSuites[s.ID] {
			continue
		}
		cli := filepath.Join(testenv.NodeModule(t, s.Package), "dist", "index.js")
		list, err := listScenarios(node, cli)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		if len(list) == 0 {
			t.Fatalf("%s: `conformance list` printed no client scenarios", s.ID)
		}
		for _, sc := range list {
			if selected(s, sc, patterns) {
				jobs = append(jobs, job{s, sc})
			}
		}
	}
	if len(jobs) == 0 {
		t.Fatal("no scenario selected")
	}

	results := make([]result, len(jobs))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cli := filepath.Join(root, "node_modules", j.s.Package, "dist", "index.js")
			r := runScenario(t, node, cli, clientBin, j.s, j.sc.Name)
			r.Expected = expected.match(j.s.ID, j.sc.Name)
			results[i] = r
		}()
	}
	wg.Wait()

	var passed, failed, unexpected, xpass int
	var b strings.Builder
	for _, r := range results {
		status := "PASS"
		switch {
		case r.passed() && r.Expected != "":
			status = "XPASS"
			xpass++
		case !r.passed() && r.Expected != "":
			status = "XFAIL"
		case !r.passed():
			status = "FAIL"
			unexpected++
		}
		if r.passed() {
			passed++
		} else {
			failed++
		}
		fmt.Fprintf(&b, "%-5s %-17s %-45s %s", status, r.Suite, r.Scenario, r.summary())
		if r.Expected != "" {
			fmt.Fprintf(&b, "  [expected: %s]", r.Expected)
		}
		b.WriteByte('\n')
	}
	fmt.Print(b.String())
	if xpass > 0 {
		fmt.Printf("%d listed in expected-failures.txt passed: remove their entries\n", xpass)
	}
	fmt.Printf("%d unexpected failures, %d expected failures\n", unexpected, failed-unexpected)
	fmt.Printf("%d passed, %d failed\n", passed, failed)

	for _, r := range results {
		if !r.passed() && r.Expected == "" {
			t.Errorf("%s %s failed unexpectedly (%s); suite output:\n%s", r.Suite, r.Scenario, r.summary(), tail(r.Output, 4000))
		}
	}
}

// selected reports whether sc runs in suite s: of the extension
// scenarios only the authorization extensions (auth/…) and the skills
// host scenarios (sep-2640-client-…) run, and only in suites without a
// spec version; with a spec version only scenarios applicable to it run.
func selected(s suite, sc scenario, patterns []string) bool {
	if slices.Contains(sc.Tags, "extension") {
		ext := strings.HasPrefix(sc.Name, "auth/") || strings.HasPrefix(sc.Name, "sep-2640-client-")
		if !ext || s.SpecVersion != "" {
			return false
		}
	} else if s.SpecVersion != "" && !slices.Contains(sc.Tags, s.SpecVersion) {
		return false
	}
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(strings.TrimSpace(p), sc.Name); ok {
			return true
		}
	}
	return false
}

var scenarioLine = regexp.MustCompile(`^\s+- (\S+) \[([^\]]*)\]\s*$`)

// listScenarios runs `conformance list` and returns its client scenarios.
func listScenarios(node, cli string) ([]scenario, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, cli, "list").Output()
	if err != nil {
		return nil, fmt.Errorf("conformance list: %w", err)
	}
	return parseList(out)
}

// parseList reads the client scenarios out of `conformance list` output.
func parseList(out []byte) ([]scenario, error) {
	var list []scenario
	inClient := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, " ") {
			inClient = strings.HasPrefix(line, "Client scenarios")
			continue
		}
		if m := scenarioLine.FindStringSubmatch(line); inClient && m != nil {
			list = append(list, scenario{Name: m[1], Tags: strings.Split(m[2], ",")})
		}
	}
	return list, sc.Err()
}

// runScenario runs one scenario of suite s with the conformance client and
// grades it from the checks.json the suite writes.
func runScenario(t *testing.T, node, cli, clientBin string, s suite, name string) result {
	r := result{Suite: s.ID, Scenario: name}
	outDir, err := os.MkdirTemp(t.TempDir(), "run-")
	if err != nil {
		r.Err = err
		return r
	}
	args := []string{cli, "client", "--command", clientBin, "--scenario", name, "--timeout", clientTimeoutMS, "-o", outDir}
	if s.SpecVersion != "" {
		args = append(args, "--spec-version", s.SpecVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = outDir
	cmd.Env = append(os.Environ(), "NODE_OPTIONS="+testenv.BindLocalhost(t))
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	// The suite spawns the client; kill the whole group on timeout and
	// after the run, so that no process outlives the scenario.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	r.Output = out.String()
	if ctx.Err() != nil {
		r.Err = fmt.Errorf("timed out after %v", scenarioTimeout)
		return r
	}
	if runErr != nil {
		if ee, ok := runErr.(*exec.ExitError); ok {
			r.ExitCode = ee.ExitCode()
		} else {
			r.Err = runErr
			return r
		}
	}
	found := false
	err = filepath.WalkDir(outDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return err
		}
		found = true
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var checks []struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				r.Success++
			case "FAILURE":
				r.Failed++
			case "WARNING":
				r.Warnings++
			}
		}
		return nil
	})
	switch {
	case err != nil:
		r.Err = err
	case !found:
		r.Err = fmt.Errorf("no checks.json written (exit %d)", r.ExitCode)
	}
	return r
}

// expectations are the entries of expected-failures.txt.
type expectations []struct{ suite, scenario, reason string }

func loadExpected(file string) (expectations, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var e expectations
	for i, line := range strings.Split(string(b), "\n") {
		reason := ""
		if k := strings.Index(line, "#"); k >= 0 {
			reason = strings.TrimSpace(line[k+1:])
			line = line[:k]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 || reason == "" {
			return nil, fmt.Errorf("%s:%d: want `<suite> <scenario>  # reason`", file, i+1)
		}
		for _, p := range f {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("%s:%d: bad pattern %q: %w", file, i+1, p, err)
			}
		}
		e = append(e, struct{ suite, scenario, reason string }{f[0], f[1], reason})
	}
	return e, nil
}

// match returns the reason of the first entry matching suite and
// scenario, or "".
func (e expectations) match(suiteID, scenario string) string {
	for _, x := range e {
		okSuite, _ := path.Match(x.suite, suiteID)
		okScenario, _ := path.Match(x.scenario, scenario)
		if okSuite && okScenario {
			return x.reason
		}
	}
	return ""
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
