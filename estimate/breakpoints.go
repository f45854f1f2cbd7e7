package estimate

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// Segmentation is a least-squares segmentation of a series into regimes (Bai and Perron, 2003),
// as R's strucchange::breakpoints computes it.
type Segmentation struct {
	// Breaks are the 0-based indices of the last observation of every segment but the last
	// (strucchange reports them 1-based).
	Breaks []int `json:"breaks"`
	// RSS and BIC per number of breaks, 0…MaxBreaks.
	RSS []float64 `json:"rss"`
	BIC []float64 `json:"bic"`
	H   int       `json:"h"`
	// Segments holds each segment's fit: intercept and, for a linear model, slope.
	Segments [][]float64 `json:"segments"`
}

// Breakpoints segments y (against x when x is not nil: y = a + b·x in every segment; y = a
// otherwise) into at most maxBreaks+1 segments of at least h observations, choosing the number
// of breaks by BIC as strucchange does: BIC = −2·logL + df·ln n with
// logL = −n/2·(ln(RSS/n) + 1 + ln 2π) and df = (m+1)·p + m + 1 for m breaks and p
// coefficients per segment. The optimal partition for each m comes from dynamic programming
// over segment residual sums of squares; each segment's RSS is computed in O(1) from prefix
// sums of the (globally centred and scaled) data, so the cost is O(maxBreaks·n²) time and
// O(maxBreaks·n) memory. maxBreaks ≤ 0 means as many as h allows (⌊n/h⌋ − 1).
func Breakpoints(x, y []float64, h, maxBreaks int) (*Segmentation, error) {
	n := len(y)
	if x != nil && len(x) != n {
		panic("estimate: Breakpoints: x and y differ in length")
	}
	p := 1
	if x != nil {
		p = 2
	}
	if h < p+1 {
		return nil, fmt.Errorf("estimate: breakpoints: minimum segment size h = %d, need at least %d for %d coefficients", h, p+1, p)
	}
	if n < 2*h {
		return nil, fmt.Errorf("estimate: breakpoints: series of %d points, need at least 2h = %d", n, 2*h)
	}
	if maxBreaks <= 0 || maxBreaks > n/h-1 {
		maxBreaks = n/h - 1
	}
	pre := newPrefix(x, y)
	// cost[m][j]: least RSS of observations 0…j in m+1 segments; from[m][j]: end of the m-th.
	cost := make([][]float64, maxBreaks+1)
	from := make([][]int, maxBreaks+1)
	for m := range cost {
		cost[m] = make([]float64, n)
		from[m] = make([]int, n)
		for j := range cost[m] {
			cost[m][j] = math.Inf(1)
		}
	}
	for j := h - 1; j < n; j++ {
		cost[0][j] = pre.rss(0, j)
	}
	for m := 1; m <= maxBreaks; m++ {
		for j := (m+1)*h - 1; j < n; j++ {
			best, arg := math.Inf(1), -1
			for i := m*h - 1; i <= j-h; i++ {
				if c := cost[m-1][i] + pre.rss(i+1, j); c < best {
					best, arg = c, i
				}
			}
			cost[m][j], from[m][j] = best, arg
		}
	}
	s := &Segmentation{H: h}
	bestM, bestBIC := 0, math.Inf(1)
	for m := 0; m <= maxBreaks; m++ {
		rss := cost[m][n-1] * pre.scale
		s.RSS = append(s.RSS, rss)
		df := float64((m+1)*p + m + 1)
		logL := -0.5 * float64(n) * (math.Log(rss/float64(n)) + 1 + math.Log(2*math.Pi))
		bic := -2*logL + df*math.Log(float64(n))
		s.BIC = append(s.BIC, bic)
		if bic < bestBIC {
			bestM, bestBIC = m, bic
		}
	}
	s.Breaks = make([]int, bestM)
	j := n - 1
	for m := bestM; m >= 1; m-- {
		j = from[m][j]
		s.Breaks[m-1] = j
	}
	start := 0
	for _, end := range append(append([]int(nil), s.Breaks...), n-1) {
		s.Segments = append(s.Segments, pre.coef(start, end))
		start = end + 1
	}
	return s, nil
}

// prefix holds prefix sums of centred, scaled data for O(1) segment fits.
type prefix struct {
	line                  bool
	mx, sx, my, sy, scale float64
	c, x, xx, y, xy, yy   []float64
}

func newPrefix(x, y []float64) *prefix {
	n := len(y)
	p := &prefix{line: x != nil}
	p.my, p.sy = meanSD(y)
	p.scale = p.sy * p.sy
	if x != nil {
		p.mx, p.sx = meanSD(x)
	}
	p.c, p.x, p.xx, p.y, p.xy, p.yy = make([]float64, n+1), make([]float64, n+1), make([]float64, n+1), make([]float64, n+1), make([]float64, n+1), make([]float64, n+1)
	for i := 0; i < n; i++ {
		yi := (y[i] - p.my) / p.sy
		xi := 0.0
		if x != nil {
			xi = (x[i] - p.mx) / p.sx
		}
		p.c[i+1] = p.c[i] + 1
		p.x[i+1] = p.x[i] + xi
		p.xx[i+1] = p.xx[i] + xi*xi
		p.y[i+1] = p.y[i] + yi
		p.xy[i+1] = p.xy[i] + xi*yi
		p.yy[i+1] = p.yy[i] + yi*yi
	}
	return p
}

// meanSD returns the mean and the population standard deviation (1 when the data are
// constant, so that scaling is harmless).
func meanSD(v []float64) (float64, float64) {
	m, sd := stat.PopMeanStdDev(v, nil)
	if sd == 0 {
		sd = 1
	}
	return m, sd
}

// sums returns the centred sums of squares and products of observations i…j.
func (p *prefix) sums(i, j int) (n, sxx, sxy, syy, sx, sy float64) {
	n = p.c[j+1] - p.c[i]
	sx, sy = p.x[j+1]-p.x[i], p.y[j+1]-p.y[i]
	sxx = p.xx[j+1] - p.xx[i] - sx*sx/n
	sxy = p.xy[j+1] - p.xy[i] - sx*sy/n
	syy = p.yy[j+1] - p.yy[i] - sy*sy/n
	return
}

// rss is the residual sum of squares of observations i…j (scaled units).
func (p *prefix) rss(i, j int) float64 {
	_, sxx, sxy, syy, _, _ := p.sums(i, j)
	r := syy
	if p.line && sxx > 1e-12 {
		r -= sxy * sxy / sxx
	}
	return math.Max(r, 0)
}

// coef is the segment's fit in the original units: [a] or [a, b].
func (p *prefix) coef(i, j int) []float64 {
	n, sxx, sxy, _, sx, sy := p.sums(i, j)
	if !p.line {
		return []float64{p.my + p.sy*sy/n}
	}
	b := 0.0
	if sxx > 1e-12 {
		b = sxy / sxx
	}
	a := sy/n - b*sx/n
	// Back to original units: y = my + sy·(a + b·(x − mx)/sx).
	slope := p.sy * b / p.sx
	return []float64{p.my + p.sy*a - slope*p.mx, slope}
}
