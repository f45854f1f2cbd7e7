package contention

// What the external tests (package contention_test: the equality tests, which compare the
// models with the reference implementation on the experiment designs of package experiments,
// a package that imports this one) use of this package's own tests.

// EqualTol is the relative tolerance between the models and the reference implementation:
// 1e-9; the differences seen are a few ulps, because the engine adds the same rates in
// another order (a class of m parallel transfers adds m·rate at once).
const EqualTol = 1e-9

// equalTol is EqualTol, for this package's own tests.
const equalTol = EqualTol

// The reference implementation and the shared test patterns, for the external tests.
var (
	ReferencePredict       = referencePredict
	RefClosedFormPenalties = refClosedFormPenalties
	TableICluster          = tableICluster
	TableIFlows            = tableIFlows
	NodeName               = nodeName
	BenchTwoRack           = benchTwoRack
	TreeDescription        = treeDescription
	RandomFlows            = randomFlows
	BenchPattern           = benchPattern
)
