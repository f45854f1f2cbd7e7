package contention

import (
	"testing"

	"github.com/commcal/commcal/cluster"
)

func TestShape(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	g := []Edge{{"X1", "X2"}, {"X1", "X3"}, {"X4", "X2"}}
	renamed := []Edge{{"X7", "X9"}, {"X5", "X9"}, {"X5", "X8"}} // same graph, other names and order
	across := []Edge{{"X1", "X2"}, {"X1", "Y3"}, {"X4", "X2"}}  // one edge crosses racks
	other := []Edge{{"X1", "X2"}, {"X3", "X2"}, {"X4", "X2"}}   // an incast: another graph
	a, b := Shape(cl, g), Shape(cl, renamed)
	if a.Key != b.Key {
		t.Error("renaming nodes changed the shape")
	}
	// Edge classes follow the isomorphism X1→X5, X2→X9, X3→X8, X4→X7.
	if a.EdgeClass[0] != b.EdgeClass[1] || a.EdgeClass[1] != b.EdgeClass[2] || a.EdgeClass[2] != b.EdgeClass[0] {
		t.Errorf("edge classes do not follow the isomorphism: %v %v", a.EdgeClass, b.EdgeClass)
	}
	if a.EdgeClass[0] == a.EdgeClass[1] {
		t.Error("X1→X2 (contended destination) and X1→X3 share a class")
	}
	if Shape(cl, across).Key == a.Key || Shape(cl, other).Key == a.Key {
		t.Error("different graphs or rack placements share a shape")
	}
	// Swapping the racks' roles keeps the shape.
	if Shape(cl, []Edge{{"X1", "Y1"}}).Key != Shape(cl, []Edge{{"Y2", "X3"}}).Key {
		t.Error("relabelling racks changed the shape")
	}
}

func TestPenaltyTableLookupAndFallback(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	net := NewNetwork(cl, DefaultEfficiency)
	tab := NewPenaltyTable()
	pair := []Edge{{"X1", "X2"}, {"X1", "X3"}}
	tab.Add(Shape(cl, pair), pair, []float64{2.5, 2.5})
	// A pattern with a component of that shape (other nodes) and one the table lacks.
	edges := []Edge{{"X5", "X6"}, {"X5", "X7"}, {"Y1", "Y2"}, {"Y3", "Y2"}}
	rho, hits := tab.Penalties(net, edges)
	if hits != 2 || rho[0] != 2.5 || rho[1] != 2.5 || rho[2] != 2 || rho[3] != 2 {
		t.Errorf("penalties %v with %d table hits; want 2.5, 2.5 from the table and the closed form's 2, 2", rho, hits)
	}
	var none *PenaltyTable
	if r, h := none.Penalties(net, edges); h != 0 || r[0] != 2 {
		t.Errorf("nil table: %v %d", r, h)
	}
}
