package jinja

// Statement nodes.
type (
	textNode   struct{ s string }
	outputNode struct{ e expr }
	ifNode     struct {
		conds  []expr
		bodies [][]node // len(bodies) == len(conds) or len(conds)+1 with an else
	}
	forNode struct {
		targets []string
		iter    expr
		filter  expr
		body    []node
		els     []node
	}
	setNode struct {
		targets []string // one name, several for tuple unpacking
		attr    string   // {% set ns.attr = … %}
		value   expr
		body    []node // block set
	}
	macroNode struct {
		name     string
		params   []string
		defaults []expr // aligned with the last len(defaults) params
		body     []node
	}
	callBlockNode struct {
		call *callExpr
		body []node
	}
	filterBlockNode struct {
		filter *filterExpr // arg is nil: the body is the input
		body   []node
	}
	generationNode struct{ body []node }
	loopCtlNode    struct{ brk bool }
)

type node interface{}

// Expression nodes.
type (
	constExpr struct{ v Value }
	nameExpr  struct{ name string }
	listExpr  struct{ items []expr }
	tupleExpr struct{ items []expr }
	dictExpr  struct{ keys, vals []expr }
	attrExpr  struct {
		obj  expr
		name string
	}
	itemExpr  struct{ obj, key expr }
	sliceExpr struct {
		obj              expr
		start, stop, stp expr
	}
	callExpr struct {
		fn     expr
		args   []expr
		kwargs []kwarg
	}
	filterExpr struct {
		arg    expr
		name   string
		args   []expr
		kwargs []kwarg
	}
	testExpr struct {
		arg    expr
		name   string
		args   []expr
		negate bool
	}
	binExpr struct {
		op   string
		l, r expr
	}
	unaryExpr struct {
		op string
		e  expr
	}
	condExpr struct{ cond, yes, no expr }
	cmpExpr  struct {
		first expr
		ops   []string
		rest  []expr
	}
)

type expr interface{}

type kwarg struct {
	name string
	e    expr
}
