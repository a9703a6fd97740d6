package client

import (
	"math"
	"regexp/syntax"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The validator evaluates a subschema at an instance value once for
// every chain of in-place applicators ($ref, allOf, anyOf, oneOf, not,
// if, then, else, dependentSchemas, $dynamicRef) that leads to it from
// the subschemas applied there: chains that fork and join again
// (anyOf: [{$ref: a1}, {$ref: a1}] repeated forty times, in 2 KB) make
// a number of evaluations that doubles with each link, and the
// validator's time with it. A tool's outputSchema is checked for cycles
// of such applicators (which only ever fail, with a reference cycle
// error), and before validating structuredContent the evaluations are
// counted, by walking the instance with the schema, up to a budget
// linear in the instance's size. An evaluation counts as many as the
// lists of the schema it scans (enum, const, required, dependencies):
// each is as costly as an evaluation per entry, and an enum of ten
// thousand numbers took the validator 9 ms per value. A pattern matched
// against a string counts its length times the size of the pattern's
// program over patternByteCost: the regexp package's time is their
// product, and "(.*a){1000}b" took 3 s on 100 KB.
const (
	validationWorkBase    = 1 << 22 // evaluations allowed whatever the instance
	validationWorkPerNode = 128     // and per value of the instance
	patternByteCost       = 128     // pattern program instructions × bytes per evaluation
)

// schemaGraph is the compiled outputSchema as a graph.
type schemaGraph struct {
	all       []*jsonschema.Schema            // every schema reachable from the root
	cost      map[*jsonschema.Schema]int64    // what one evaluation of each counts
	insts     map[jsonschema.Regexp]int64     // the program size of each pattern
	dynamic   map[string][]*jsonschema.Schema // the schemas of each $dynamicAnchor
	recursive []*jsonschema.Schema            // the schemas with $recursiveAnchor: true
}

// newSchemaGraph indexes the schemas reachable from root.
func newSchemaGraph(root *jsonschema.Schema) *schemaGraph {
	g := &schemaGraph{cost: map[*jsonschema.Schema]int64{}, insts: map[jsonschema.Regexp]int64{}, dynamic: map[string][]*jsonschema.Schema{}}
	seen := map[*jsonschema.Schema]bool{}
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		g.all = append(g.all, s)
		g.cost[s] = evaluationCost(s)
		if s.Pattern != nil {
			g.insts[s.Pattern] = programSize(s.Pattern)
		}
		for re := range s.PatternProperties {
			g.insts[re] = programSize(re)
		}
		if s.DynamicAnchor != "" {
			g.dynamic[s.DynamicAnchor] = append(g.dynamic[s.DynamicAnchor], s)
		}
		if s.RecursiveAnchor {
			g.recursive = append(g.recursive, s)
		}
		g.inPlace(s, visit)
		eachSub(s, visit)
	}
	visit(root)
	// A $dynamicRef or $recursiveRef leads to every schema with its
	// anchor: follow the edges to those found after it was visited.
	for n := 0; n != len(g.all); {
		n = len(g.all)
		for _, s := range g.all[:n] {
			g.inPlace(s, visit)
		}
	}
	return g
}

// evaluationCost is what one evaluation of s counts: one, plus the
// entries of the lists it scans.
func evaluationCost(s *jsonschema.Schema) int64 {
	n := 1 + len(s.Required) + len(s.Dependencies) + len(s.DependentRequired)
	if s.Enum != nil {
		for _, v := range s.Enum.Values {
			n += countValues(v)
		}
	}
	if s.Const != nil {
		n += countValues(*s.Const)
	}
	for _, d := range s.Dependencies {
		if l, ok := d.([]string); ok {
			n += len(l)
		}
	}
	for _, l := range s.DependentRequired {
		n += len(l)
	}
	return int64(n)
}

// programSize is the number of instructions of re's program (the
// validator's regexps are the regexp package's); 1 when it does not
// parse here.
func programSize(re jsonschema.Regexp) int64 {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return 1
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return 1
	}
	return int64(len(prog.Inst))
}

// inPlace calls f for each subschema s applies to the same value.
func (g *schemaGraph) inPlace(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	one := func(c *jsonschema.Schema) {
		if c != nil {
			f(c)
		}
	}
	one(s.Ref)
	if s.RecursiveRef != nil {
		f(s.RecursiveRef)
		for _, r := range g.recursive {
			f(r)
		}
	}
	if d := s.DynamicRef; d != nil {
		one(d.Ref)
		for _, r := range g.dynamic[d.Anchor] {
			f(r)
		}
	}
	one(s.Not)
	for _, l := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, c := range l {
			one(c)
		}
	}
	one(s.If)
	one(s.Then)
	one(s.Else)
	for _, c := range s.DependentSchemas {
		one(c)
	}
	for _, d := range s.Dependencies {
		if c, ok := d.(*jsonschema.Schema); ok {
			one(c)
		}
	}
}

// eachSub calls f for each subschema s applies to the values inside the
// one it validates (properties, items, …), whatever they are.
func eachSub(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	for _, c := range s.Properties {
		f(c)
	}
	for _, c := range s.PatternProperties {
		f(c)
	}
	for _, c := range s.PrefixItems {
		f(c)
	}
	for _, c := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch c := c.(type) {
		case *jsonschema.Schema:
			f(c)
		case []*jsonschema.Schema:
			for _, x := range c {
				f(x)
			}
		}
	}
	for _, c := range []*jsonschema.Schema{s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema} {
		if c != nil {
			f(c)
		}
	}
}

// inPlaceCycle reports whether in-place applicators lead from a schema
// back to it.
func (g *schemaGraph) inPlaceCycle() bool {
	const (
		open = iota + 1
		done
	)
	state := map[*jsonschema.Schema]int{}
	cycle := false
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		switch state[s] {
		case open:
			cycle = true
			return
		case done:
			return
		}
		state[s] = open
		g.inPlace(s, visit)
		state[s] = done
	}
	for _, s := range g.all {
		if visit(s); cycle {
			return true
		}
	}
	return false
}

// overBudget reports whether validating inst against root would
// evaluate subschemas more than validationWorkBase +
// validationWorkPerNode times per value of inst. The in-place
// applicators must form no cycle (see inPlaceCycle). It counts every
// subschema that may apply (all branches of anyOf, if, then and else
// alike), so it is an upper bound.
func (g *schemaGraph) overBudget(root *jsonschema.Schema, inst any) bool {
	w := &budgetWalk{g: g, budget: int64(validationWorkBase) + validationWorkPerNode*int64(countValues(inst))}
	return !w.walk(inst, map[*jsonschema.Schema]int64{root: 1})
}

// budgetWalk counts the evaluations of one validation (overBudget).
type budgetWalk struct {
	g            *schemaGraph
	budget, work int64
}

// add and mul saturate at budget+1: no overflow.
func (w *budgetWalk) add(a, b int64) int64 { return min(a+b, w.budget+1) }

func (w *budgetWalk) mul(a, b int64) int64 {
	if b != 0 && a > (w.budget+1)/b {
		return w.budget + 1
	}
	return min(a*b, w.budget+1)
}

// spend counts n evaluations more and reports whether the work stays
// within the budget.
func (w *budgetWalk) spend(n int64) bool {
	w.work = w.add(w.work, n)
	return w.work <= w.budget
}

// match is what matching re against str counts.
func (w *budgetWalk) match(re jsonschema.Regexp, str string) int64 {
	l, p := int64(len(str)), w.g.insts[re]
	if p > 0 && l > math.MaxInt64/p {
		return w.budget + 1
	}
	return w.add(1, l*p/patternByteCost)
}

// walk counts the evaluations of v by the schemas applied to it (each
// with the number of chains that reach it) and by those they apply to
// its children; false once over the budget.
func (w *budgetWalk) walk(v any, applied map[*jsonschema.Schema]int64) bool {
	order, n, ok := w.closure(applied)
	if !ok {
		return false
	}
	switch v := v.(type) {
	case string:
		for _, s := range order {
			if s.Pattern != nil && !w.spend(w.mul(n[s], w.match(s.Pattern, v))) {
				return false
			}
		}
	case map[string]any:
		for key, child := range v {
			if !w.member(order, n, key, child) {
				return false
			}
		}
	case []any:
		for i, child := range v {
			if !w.item(order, n, i, child) {
				return false
			}
		}
	}
	return true
}

// closure returns the in-place closure of applied, parents before
// children, with the number of chains that reach each schema, having
// counted their evaluations; ok is false once over the budget.
func (w *budgetWalk) closure(applied map[*jsonschema.Schema]int64) (order []*jsonschema.Schema, n map[*jsonschema.Schema]int64, ok bool) {
	g := w.g
	seen := map[*jsonschema.Schema]bool{}
	var post func(s *jsonschema.Schema)
	post = func(s *jsonschema.Schema) {
		if !seen[s] {
			seen[s] = true
			g.inPlace(s, post)
			order = append(order, s)
		}
	}
	for s := range applied {
		post(s)
	}
	n = make(map[*jsonschema.Schema]int64, len(order))
	for s, k := range applied {
		n[s] = k
	}
	for i := len(order) - 1; i >= 0; i-- {
		s, k := order[i], n[order[i]]
		if !w.spend(w.mul(k, g.cost[s])) {
			return nil, nil, false
		}
		g.inPlace(s, func(c *jsonschema.Schema) { n[c] = w.add(n[c], k) })
	}
	return order, n, true
}

// member walks the member key: child of an object that the schemas of
// order (reached n times each) apply to.
func (w *budgetWalk) member(order []*jsonschema.Schema, n map[*jsonschema.Schema]int64, key string, child any) bool {
	next, names := map[*jsonschema.Schema]int64{}, map[*jsonschema.Schema]int64{}
	for _, s := range order {
		k := n[s]
		put := func(m map[*jsonschema.Schema]int64, c *jsonschema.Schema) {
			if c != nil {
				m[c] = w.add(m[c], k)
			}
		}
		c, named := s.Properties[key]
		put(next, c)
		// Each pattern is matched against each name.
		for re := range s.PatternProperties {
			if !w.spend(w.mul(k, w.match(re, key))) {
				return false
			}
		}
		for re, c := range s.PatternProperties {
			if re.MatchString(key) {
				put(next, c)
				named = true
			}
		}
		if c, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !named {
			put(next, c)
		}
		put(next, s.UnevaluatedProperties)
		put(names, s.PropertyNames)
	}
	return (len(names) == 0 || w.walk(key, names)) && (len(next) == 0 || w.walk(child, next))
}

// item walks the item i of an array that the schemas of order (reached n
// times each) apply to.
func (w *budgetWalk) item(order []*jsonschema.Schema, n map[*jsonschema.Schema]int64, i int, child any) bool {
	next := map[*jsonschema.Schema]int64{}
	for _, s := range order {
		k := n[s]
		put := func(c *jsonschema.Schema) {
			if c != nil {
				next[c] = w.add(next[c], k)
			}
		}
		if i < len(s.PrefixItems) {
			put(s.PrefixItems[i])
		} else {
			put(s.Items2020)
		}
		switch items := s.Items.(type) {
		case *jsonschema.Schema:
			put(items)
		case []*jsonschema.Schema:
			if i < len(items) {
				put(items[i])
			} else if c, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
				put(c)
			}
		}
		put(s.Contains)
		put(s.UnevaluatedItems)
	}
	return len(next) == 0 || w.walk(child, next)
}

// countValues counts the values of v, v included.
func countValues(v any) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			n += countValues(c)
		}
	case []any:
		for _, c := range v {
			n += countValues(c)
		}
	}
	return n
}
