package estimate

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// strd reads a NIST StRD linear-regression file: the certified estimates and standard
// deviations, the residual standard deviation, R², and the data columns.
type strd struct {
	coef, sd []float64
	rsd, r2  float64
	y        []float64
	x        [][]float64
}

func readSTRD(t *testing.T, name string) strd {
	t.Helper()
	f, err := os.Open("testdata/nist-strd/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d strd
	inData := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case inData && len(fields) > 1:
			vals := make([]float64, len(fields))
			for i, s := range fields {
				vals[i], _ = strconv.ParseFloat(s, 64)
			}
			d.y = append(d.y, vals[0])
			d.x = append(d.x, vals[1:])
		case len(fields) == 3 && strings.HasPrefix(fields[0], "B") && !strings.Contains(fields[1], "*"):
			c, err1 := strconv.ParseFloat(fields[1], 64)
			s, err2 := strconv.ParseFloat(fields[2], 64)
			if err1 == nil && err2 == nil {
				d.coef, d.sd = append(d.coef, c), append(d.sd, s)
			}
		case len(fields) >= 4 && fields[0] == "Standard" && fields[1] == "Deviation":
			d.rsd, _ = strconv.ParseFloat(fields[len(fields)-1], 64)
		case len(fields) == 2 && fields[0] == "R-Squared":
			d.r2, _ = strconv.ParseFloat(fields[1], 64)
		case len(fields) > 0 && fields[0] == "Data:" && len(fields) > 1 && fields[1] == "y":
			inData = true
		}
	}
	return d
}

// digits is the number of correct significant digits (log relative error), capped at 15.
func digits(got, want float64) float64 {
	if got == want {
		return 15
	}
	if want == 0 {
		return -math.Log10(math.Abs(got))
	}
	return math.Min(15, -math.Log10(math.Abs(got-want)/math.Abs(want)))
}

func TestLeastSquaresNIST(t *testing.T) {
	cases := []struct {
		file   string
		design func(x []float64) []float64 // a row of X from the data's predictors
		min    float64                     // correct digits required
	}{
		// Longley: the classic test, to 1e-7 relative (7 digits).
		{"Longley.dat", func(x []float64) []float64 { return append([]float64{1}, x...) }, 7},
		{"Norris.dat", func(x []float64) []float64 { return []float64{1, x[0]} }, 9},
		{"Pontius.dat", func(x []float64) []float64 { return []float64{1, x[0], x[0] * x[0]} }, 7},
		{"Wampler1.dat", func(x []float64) []float64 { return poly(x[0], 5) }, 6},
		{"Wampler2.dat", func(x []float64) []float64 { return poly(x[0], 5) }, 6},
	}
	for _, tc := range cases {
		d := readSTRD(t, tc.file)
		rows := make([]float64, 0)
		p := 0
		for _, x := range d.x {
			row := tc.design(x)
			p = len(row)
			rows = append(rows, row...)
		}
		fit, err := LeastSquares(mat.NewDense(len(d.y), p, rows), d.y, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if len(d.coef) != p {
			t.Fatalf("%s: %d certified parameters, design has %d", tc.file, len(d.coef), p)
		}
		worst := 15.0
		for j := range d.coef {
			worst = math.Min(worst, digits(fit.Coef[j], d.coef[j]))
			if d.sd[j] != 0 {
				worst = math.Min(worst, digits(fit.SE[j], d.sd[j]))
			}
		}
		if d.rsd != 0 {
			worst = math.Min(worst, digits(fit.RSE, d.rsd))
		}
		worst = math.Min(worst, digits(fit.R2, d.r2))
		if worst < tc.min {
			t.Errorf("%s: %.1f correct digits, want at least %g (coef %v)", tc.file, worst, tc.min, fit.Coef)
		}
		t.Logf("%s: %.1f correct digits (coefficients, standard deviations, RSE, R²)", tc.file, worst)
	}
}

func poly(x float64, deg int) []float64 {
	row := make([]float64, deg+1)
	v := 1.0
	for i := range row {
		row[i] = v
		v *= x
	}
	return row
}

func TestLeastSquaresDegenerate(t *testing.T) {
	// All sizes equal: the slope cannot be told from the intercept.
	x := mat.NewDense(4, 2, []float64{1, 5, 1, 5, 1, 5, 1, 5})
	if _, err := LeastSquares(x, []float64{1, 2, 3, 4}, nil); err == nil || !strings.Contains(err.Error(), "singular") {
		t.Errorf("equal sizes: %v", err)
	}
	if _, err := LeastSquares(mat.NewDense(2, 2, []float64{1, 1, 1, 2}), []float64{1, 2}, nil); err == nil {
		t.Error("two points for two parameters accepted")
	}
}
