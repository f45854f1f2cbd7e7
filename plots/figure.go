package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"codeberg.org/go-pdf/fpdf"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/commcal/commcal/internal/atomicio"
)

// Figure is one rendered figure: a name (the file name without extension), a size and what
// to draw.
type Figure struct {
	Name          string
	Title         string
	Width, Height vg.Length
	// Warnings says, one line each ("plots: <name>: ..."), what the figure leaves out because
	// it cannot be drawn: values that are NaN, infinite, beyond ±1e300, or not positive on a
	// log axis, series of mismatched lengths, panels with nothing left to draw. A figure with
	// nothing at all to draw says so in its picture. Callers show the warnings beside the
	// figure (a report's warnings); they are not errors.
	Warnings []string
	draw     func(dc draw.Canvas)
	// legend, when set, is drawn to the right of the plots, never over them (legendBeside).
	legend *plot.Legend
	err    error // set when the figure could not be built; PNG and SVG return it
}

// warn records that the figure leaves something out.
func (f *Figure) warn(format string, a ...any) {
	f.Warnings = append(f.Warnings, "plots: "+f.Name+": "+fmt.Sprintf(format, a...))
}

// maxSide bounds a figure's width and height (about 3,800 pixels at 96 dots per inch), so
// that a figure of thousands of panels or nodes cannot ask for gigabytes of pixels.
const maxSide = 100 * vg.Centimeter

// newFigure starts a figure; its size is bounded by maxSide.
func newFigure(name, title string, w, h vg.Length) *Figure {
	f := &Figure{Name: name, Title: title}
	f.resize(w, h)
	return f
}

// resize sets a figure's size, bounded by maxSide: w is the plots' width, to which the room
// of a legend beside them is added.
func (f *Figure) resize(w, h vg.Length) {
	f.Width, f.Height = min(w+f.legendRoom(), maxSide), min(h, maxSide)
}

// legendPad separates the legend from the plots and from the figure's edge.
const legendPad = 2 * vg.Millimeter

// legendBeside makes l the figure's legend, drawn to the right of its plots, at the top; the
// figure widens to make room for it, so that a legend never covers data. The legends of the
// plots given are cleared (a figure shows one legend for all its panels).
func (f *Figure) legendBeside(l plot.Legend, clear ...*plot.Plot) {
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(8)
	l.ThumbnailWidth = vg.Points(18)
	l.Padding = vg.Points(2)
	for _, q := range clear {
		if q != nil {
			q.Legend = plot.NewLegend()
		}
	}
	w := f.Width
	f.legend = &l
	f.Width = min(w+f.legendRoom(), maxSide)
}

// legendRoom is the width a legend beside the plots takes, padding included (0 without one).
func (f *Figure) legendRoom() vg.Length {
	if f.legend == nil {
		return 0
	}
	r := f.legend.Rectangle(draw.Canvas{})
	if w := r.Max.X - r.Min.X; w > 0 {
		return w + 2*legendPad
	}
	return 0
}

// drawAll draws the plots, and the legend beside them.
func (f *Figure) drawAll(dc draw.Canvas) {
	room := f.legendRoom()
	if room == 0 || room >= dc.Max.X-dc.Min.X {
		f.draw(dc)
		return
	}
	plots, leg := dc, dc
	plots.Max.X -= room
	leg.Min.X, leg.Max.X = plots.Max.X+legendPad, dc.Max.X-legendPad
	leg.Max.Y -= 8 * vg.Millimeter // level with the plots' top, below their titles
	f.draw(plots)
	f.legend.Draw(leg)
}

// recoverFigure turns a panic while a figure is built into a figure that cannot be drawn,
// whose PNG and SVG return an error naming it: no panic leaves the package. Constructors
// call it deferred.
func recoverFigure(name string, f **Figure) {
	if r := recover(); r != nil {
		*f = &Figure{Name: name, Title: name, Width: 10 * vg.Centimeter, Height: 6 * vg.Centimeter,
			err: fmt.Errorf("plots: figure %s cannot be built: %v", name, r)}
	}
}

// single sets a figure to draw one plot.
func (f *Figure) single(p *plot.Plot) *Figure {
	f.draw = p.Draw
	return f
}

// grid sets a figure to draw plots tiled in rows and columns, axes aligned; nil plots leave
// their tile blank. A grid without any plot draws a note that there is nothing to draw.
func (f *Figure) grid(plots [][]*plot.Plot) *Figure {
	rows, cols, n := len(plots), 0, 0
	for _, r := range plots {
		cols = max(cols, len(r))
		for _, p := range r {
			if p != nil {
				n++
			}
		}
	}
	if n == 0 {
		return f.nothing()
	}
	// Align wants every row as long as the longest.
	full := make([][]*plot.Plot, rows)
	for i, r := range plots {
		full[i] = make([]*plot.Plot, cols)
		copy(full[i], r)
	}
	f.draw = func(dc draw.Canvas) {
		t := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter, PadY: vg.Millimeter,
			PadTop: vg.Points(2), PadBottom: vg.Points(2), PadLeft: vg.Points(2), PadRight: vg.Points(2)}
		canvases := plot.Align(full, t, dc)
		for i := range full {
			for j, p := range full[i] {
				if p != nil {
					p.Draw(canvases[i][j])
				}
			}
		}
	}
	return f
}

// nothing sets a figure to a note that it has nothing to draw, and warns.
func (f *Figure) nothing() *Figure {
	f.warn("nothing to draw: no value can be shown")
	f.legend = nil
	if f.Width == 0 || f.Height == 0 {
		f.resize(10*vg.Centimeter, 6*vg.Centimeter)
	}
	return f.single(emptyPlot(f.Title, "no data that can be drawn (see the warnings)"))
}

// emptyPlot is a plot without axes that shows a note.
func emptyPlot(title, note string) *plot.Plot {
	p := newPlot(title, "", "")
	p.HideAxes()
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0.5, Y: 0.5}}, Labels: []string{note}})
	if err == nil {
		p.Add(l)
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	return p
}

// render draws the figure on a canvas and writes it, turning a panic of the plotting library
// into an error naming the figure.
func (f *Figure) render(c interface {
	vg.CanvasSizer
	io.WriterTo
}) (out []byte, err error) {
	if f.err != nil {
		return nil, f.err
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("plots: figure %s cannot be drawn: %v", f.Name, r)
		}
	}()
	f.drawAll(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", f.Name, err)
	}
	return buf.Bytes(), nil
}

// DefaultDPI is the resolution of PNG figures unless asked otherwise: a screen's.
const DefaultDPI = 96

// MaxDPI bounds the resolution of PNG figures: at 1,200 dots per inch the largest figure
// (maxSide) is about 47,000 pixels a side already.
const MaxDPI = 1200

// PNG renders the figure at DefaultDPI on white.
func (f *Figure) PNG() ([]byte, error) { return f.PNGAt(DefaultDPI) }

// PNGAt renders the figure at dpi dots per inch (DefaultDPI when 0) on white; a resolution
// outside (0, MaxDPI] is an error.
func (f *Figure) PNGAt(dpi float64) ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	if dpi == 0 {
		dpi = DefaultDPI
	}
	if !(dpi > 0 && dpi <= MaxDPI) {
		return nil, fmt.Errorf("plots: %s: resolution %g dpi, want (0, %d]", f.Name, dpi, MaxDPI)
	}
	return f.render(vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(int(math.Round(dpi))),
		vgimg.UseBackgroundColor(color.White))})
}

// pdfDate is the creation and modification date every PDF carries, so that the same figure
// gives the same bytes (the PDF library's default is the time of writing).
var pdfDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func init() {
	// The PDF library reads these defaults when a document is made; commcal makes PDFs only
	// here. Sorted catalogues keep fonts and images in a fixed order.
	fpdf.SetDefaultCreationDate(pdfDate)
	fpdf.SetDefaultModificationDate(pdfDate)
	fpdf.SetDefaultCatalogSort(true)
}

// PDF renders the figure as PDF (vector, fonts embedded), for papers.
func (f *Figure) PDF() ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.render(vgpdf.New(f.Width, f.Height))
}

// SVG renders the figure as SVG.
func (f *Figure) SVG() ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.render(vgsvg.New(f.Width, f.Height))
}

// Write writes <dir>/<name>.png (at dpi dots per inch, DefaultDPI when 0), <dir>/<name>.svg
// and <dir>/<name>.pdf atomically and returns the SVG. Nothing is written when the figure
// cannot be drawn.
func (f *Figure) Write(dir string, dpi float64) ([]byte, error) {
	png, err := f.PNGAt(dpi)
	if err != nil {
		return nil, err
	}
	svg, err := f.SVG()
	if err != nil {
		return nil, err
	}
	pdf, err := f.PDF()
	if err != nil {
		return nil, err
	}
	for _, out := range []struct {
		ext  string
		data []byte
	}{{".png", png}, {".svg", svg}, {".pdf", pdf}} {
		if err := atomicio.WriteFile(filepath.Join(dir, f.Name+out.ext), out.data); err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
	}
	return svg, nil
}

// newPlot makes a plot with a title and axis labels; a title may have several lines.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	lines := strings.Split(title, "\n")
	for i := range lines {
		lines[i] = label(lines[i])
	}
	p.Title.Text = strings.Join(lines, "\n")
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.TextStyle.Font.Size = vg.Points(9)
	p.Y.Label.TextStyle.Font.Size = vg.Points(9)
	return p
}

// label makes text that comes from input files (node, run, model and setting names) safe to
// draw: invalid UTF-8, control and format characters become U+FFFD, and it is cut to 80
// characters. The SVG backend escapes < > & itself.
func label(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return '\uFFFD'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// palette colours series in a fixed order, so that a model keeps its colour across figures.
var palette = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, {R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, {R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
}
