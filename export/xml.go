package export

import (
	"bytes"
	"encoding/xml"
	"fmt"
)

// The SimGrid platform elements the export writes (DTD version 4.1, SimGrid 3.32), encoded
// with encoding/xml.
type (
	xmlPlatform struct {
		XMLName xml.Name `xml:"platform"`
		Version string   `xml:"version,attr"`
		Zone    xmlZone  `xml:"zone"`
	}
	// xmlZone lists its hosts, routers and links before its routes, as the DTD requires.
	xmlZone struct {
		ID      string      `xml:"id,attr"`
		Routing string      `xml:"routing,attr"`
		Hosts   []xmlHost   `xml:"host"`
		Routers []xmlRouter `xml:"router"`
		Links   []xmlLink   `xml:"link"`
		Routes  []xmlRoute  `xml:"route"`
	}
	xmlHost struct {
		ID    string `xml:"id,attr"`
		Speed string `xml:"speed,attr"`
	}
	xmlRouter struct {
		ID string `xml:"id,attr"`
	}
	xmlLink struct {
		ID            string `xml:"id,attr"`
		Bandwidth     string `xml:"bandwidth,attr"`
		Latency       string `xml:"latency,attr"`
		SharingPolicy string `xml:"sharing_policy,attr"`
	}
	xmlRoute struct {
		Src         string       `xml:"src,attr"`
		Dst         string       `xml:"dst,attr"`
		Symmetrical string       `xml:"symmetrical,attr"`
		Links       []xmlLinkCtn `xml:"link_ctn"`
	}
	// xmlLinkCtn names a link of a route; Direction (UP or DOWN) picks a SPLITDUPLEX link's
	// direction.
	xmlLinkCtn struct {
		ID        string `xml:"id,attr"`
		Direction string `xml:"direction,attr,omitempty"`
	}
)

// platformComment heads the platform file.
const platformComment = ` Written by commcal export simgrid. Bandwidths are the capacities of commcal's models
     in bytes per second; latencies split Hockney's alpha per path class over the links
     (see export.json). Simulate with the options of maxmin.cfg to compute commcal's maxmin,
     or with smpirun and smpi.cfg for the calibrated protocol regimes. `

// encodePlatform writes the platform document: XML declaration, SimGrid's DOCTYPE, a comment
// and the platform, indented, ending with a newline.
func encodePlatform(zone xmlZone) ([]byte, error) {
	var b bytes.Buffer
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	for _, tok := range []xml.Token{
		xml.ProcInst{Target: "xml", Inst: []byte(`version="1.0" encoding="UTF-8"`)}, xml.CharData("\n"),
		xml.Directive(`DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd"`), xml.CharData("\n"),
		xml.Comment(platformComment), xml.CharData("\n"),
	} {
		if err := enc.EncodeToken(tok); err != nil {
			return nil, fmt.Errorf("export: platform: %w", err)
		}
	}
	if err := enc.Encode(xmlPlatform{Version: "4.1", Zone: zone}); err != nil {
		return nil, fmt.Errorf("export: platform: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}
