package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/commcal/commcal/internal/atomicio"
)

// Figure is one rendered figure: a name (the file name without extension), a size and what
// to draw.
type Figure struct {
	Name          string
	Title         string
	Width, Height vg.Length
	draw          func(dc draw.Canvas)
}

// single makes a figure of one plot.
func single(name, title string, p *plot.Plot, w, h vg.Length) *Figure {
	return &Figure{Name: name, Title: title, Width: w, Height: h, draw: p.Draw}
}

// grid makes a figure of plots tiled in rows and columns, axes aligned.
func grid(name, title string, plots [][]*plot.Plot, w, h vg.Length) *Figure {
	return &Figure{Name: name, Title: title, Width: w, Height: h, draw: func(dc draw.Canvas) {
		rows, cols := len(plots), 0
		for _, r := range plots {
			cols = max(cols, len(r))
		}
		t := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter, PadY: vg.Millimeter,
			PadTop: vg.Points(2), PadBottom: vg.Points(2), PadLeft: vg.Points(2), PadRight: vg.Points(2)}
		canvases := plot.Align(plots, t, dc)
		for i := range plots {
			for j, p := range plots[i] {
				if p != nil {
					p.Draw(canvases[i][j])
				}
			}
		}
	}}
}

// PNG renders the figure at 96 dots per inch on white.
func (f *Figure) PNG() ([]byte, error) {
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(96),
		vgimg.UseBackgroundColor(color.White))}
	f.draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", f.Name, err)
	}
	return buf.Bytes(), nil
}

// SVG renders the figure as SVG.
func (f *Figure) SVG() ([]byte, error) {
	c := vgsvg.New(f.Width, f.Height)
	f.draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", f.Name, err)
	}
	return buf.Bytes(), nil
}

// Write writes <dir>/<name>.png and <dir>/<name>.svg atomically and returns the SVG.
func (f *Figure) Write(dir string) ([]byte, error) {
	png, err := f.PNG()
	if err != nil {
		return nil, err
	}
	svg, err := f.SVG()
	if err != nil {
		return nil, err
	}
	if err := atomicio.WriteFile(filepath.Join(dir, f.Name+".png"), png); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	if err := atomicio.WriteFile(filepath.Join(dir, f.Name+".svg"), svg); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	return svg, nil
}

// newPlot makes a plot with a title and axis labels.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.TextStyle.Font.Size = vg.Points(9)
	p.Y.Label.TextStyle.Font.Size = vg.Points(9)
	return p
}

// palette colours series in a fixed order, so that a model keeps its colour across figures.
var palette = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, {R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, {R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
}
