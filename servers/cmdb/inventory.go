package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Asset is one host in the CMDB. Records are deliberately rich, as real CMDB
// records are, so that a broad find_assets answer is large.
type Asset struct {
	Hostname    string   `json:"hostname" jsonschema:"The host's unique name, e.g. jump-prod-02."`
	Service     string   `json:"service" jsonschema:"The service the host belongs to, e.g. customer-db."`
	Env         string   `json:"env" jsonschema:"Environment: prod, staging or dev."`
	Role        string   `json:"role" jsonschema:"What the host does within its service."`
	Owner       string   `json:"owner" jsonschema:"The person accountable for the host."`
	OwnerEmail  string   `json:"owner_email" jsonschema:"The owner's e-mail address."`
	Team        string   `json:"team" jsonschema:"The team that runs the service."`
	Criticality string   `json:"criticality" jsonschema:"tier-1 (customer-facing, page at any hour) to tier-3 (best effort)."`
	Status      string   `json:"status" jsonschema:"in-service, maintenance or decommissioning."`
	OS          string   `json:"os" jsonschema:"Operating system and version."`
	IPv4        string   `json:"ipv4" jsonschema:"Primary IPv4 address."`
	Datacenter  string   `json:"datacenter" jsonschema:"Datacenter code."`
	Rack        string   `json:"rack" jsonschema:"Rack position within the datacenter."`
	CPUCores    int      `json:"cpu_cores" jsonschema:"Number of CPU cores."`
	MemoryGB    int      `json:"memory_gb" jsonschema:"Memory in GiB."`
	DiskGB      int      `json:"disk_gb" jsonschema:"Local disk in GiB."`
	LastPatched string   `json:"last_patched" jsonschema:"Date of the last OS patch (YYYY-MM-DD)."`
	Backup      string   `json:"backup_policy" jsonschema:"How and how often the host is backed up."`
	DependsOn   []string `json:"depends_on" jsonschema:"Services this host needs in order to work."`
	Tags        []string `json:"tags" jsonschema:"Free-form labels."`
	Notes       string   `json:"notes" jsonschema:"Operational notes for whoever is on call."`
}

// service describes what every host of one service has in common.
type service struct {
	name, team, owner, email string
	criticality, os, backup  string
	cpu, memGB, diskGB       int
	dependsOn, tags          []string
	notes                    string
}

var services = map[string]service{
	"remote-access": {
		name: "remote-access", team: "Infrastructure Security", owner: "Camille Michel", email: "camille.michel@example.com",
		criticality: "tier-1", os: "Debian 12.7", backup: "config only, nightly to vault-backup-01",
		cpu: 4, memGB: 8, diskGB: 80, dependsOn: []string{"identity", "monitoring"},
		tags:  []string{"bastion", "ssh", "mfa-required", "internet-facing"},
		notes: "SSH bastion for production access. Every session is recorded; logins need MFA. Repeated failed logins followed by a success are an incident: open a ticket.",
	},
	"customer-db": {
		name: "customer-db", team: "Data Platform", owner: "Priya Raman", email: "priya.raman@example.com",
		criticality: "tier-1", os: "Rocky Linux 9.4", backup: "WAL streaming plus a full base backup every 6 hours, kept 35 days",
		cpu: 32, memGB: 256, diskGB: 4096, dependsOn: []string{"storage", "monitoring", "identity"},
		tags:  []string{"postgresql-16", "pii", "encrypted-at-rest", "gdpr"},
		notes: "PostgreSQL cluster holding customer accounts and orders. Holds personal data: never copy it to a lower environment. Failover is automatic; page the Data Platform on-call before any manual action.",
	},
	"web-frontend": {
		name: "web-frontend", team: "Web", owner: "Lena Fischer", email: "lena.fischer@example.com",
		criticality: "tier-1", os: "Ubuntu 24.04 LTS", backup: "stateless, rebuilt from the image",
		cpu: 8, memGB: 16, diskGB: 100, dependsOn: []string{"payments-api", "search", "customer-db"},
		tags:  []string{"nginx", "internet-facing", "autoscaled"},
		notes: "Serves the shop front end behind the load balancer. Stateless: replace rather than repair.",
	},
	"payments-api": {
		name: "payments-api", team: "Payments", owner: "Tomás Ibarra", email: "tomas.ibarra@example.com",
		criticality: "tier-1", os: "Ubuntu 24.04 LTS", backup: "stateless, rebuilt from the image",
		cpu: 8, memGB: 32, diskGB: 100, dependsOn: []string{"customer-db", "identity"},
		tags:  []string{"pci-dss", "go", "mtls"},
		notes: "Card payments and refunds. PCI scope: changes need a second approver.",
	},
	"search": {
		name: "search", team: "Web", owner: "Amira Haddad", email: "amira.haddad@example.com",
		criticality: "tier-2", os: "Ubuntu 24.04 LTS", backup: "index snapshots daily, kept 7 days",
		cpu: 16, memGB: 64, diskGB: 1024, dependsOn: []string{"customer-db", "monitoring"},
		tags:  []string{"opensearch", "reindex-sundays"},
		notes: "Product search. A full re-index runs on Sundays and slows queries for about an hour.",
	},
	"monitoring": {
		name: "monitoring", team: "Infrastructure", owner: "Jonas Berg", email: "jonas.berg@example.com",
		criticality: "tier-2", os: "Debian 12.7", backup: "metrics kept 30 days, dashboards in git",
		cpu: 16, memGB: 64, diskGB: 2048, dependsOn: []string{"storage"},
		tags:  []string{"prometheus", "alertmanager", "grafana"},
		notes: "Metrics, alerting and dashboards for every environment.",
	},
	"identity": {
		name: "identity", team: "Infrastructure Security", owner: "Yusuf Okafor", email: "yusuf.okafor@example.com",
		criticality: "tier-1", os: "Debian 12.7", backup: "directory export hourly, kept 90 days",
		cpu: 4, memGB: 16, diskGB: 200, dependsOn: []string{"monitoring"},
		tags:  []string{"ldap", "sso", "mfa"},
		notes: "Directory and single sign-on. An outage locks everyone out of the bastions.",
	},
	"ci-runners": {
		name: "ci-runners", team: "Developer Experience", owner: "Sam Novak", email: "sam.novak@example.com",
		criticality: "tier-3", os: "Ubuntu 24.04 LTS", backup: "none (ephemeral)",
		cpu: 16, memGB: 32, diskGB: 500, dependsOn: []string{"storage"},
		tags:  []string{"ephemeral", "docker"},
		notes: "Build runners. Safe to drain and recycle at any time.",
	},
	"mail-relay": {
		name: "mail-relay", team: "Infrastructure", owner: "Jonas Berg", email: "jonas.berg@example.com",
		criticality: "tier-2", os: "Debian 12.7", backup: "config only, nightly",
		cpu: 2, memGB: 4, diskGB: 50, dependsOn: []string{"identity"},
		tags:  []string{"postfix", "dkim"},
		notes: "Outbound mail for order confirmations and password resets.",
	},
}

// host is the part of an asset that differs between hosts of a service.
type host struct {
	name, service, env, role string
	owner                    string // overrides the service owner when set
	status                   string // "" means in-service
}

var hosts = []host{
	{name: "jump-prod-01", service: "remote-access", env: "prod", role: "SSH bastion (primary)"},
	{name: "jump-prod-02", service: "remote-access", env: "prod", role: "SSH bastion (secondary)"},
	{name: "jump-staging-01", service: "remote-access", env: "staging", role: "SSH bastion"},
	{name: "vpn-prod-01", service: "remote-access", env: "prod", role: "WireGuard VPN gateway", owner: "Yusuf Okafor"},
	{name: "customer-db-prod-01", service: "customer-db", env: "prod", role: "primary (eu-west)"},
	{name: "customer-db-prod-02", service: "customer-db", env: "prod", role: "synchronous replica (eu-west)"},
	{name: "customer-db-prod-03", service: "customer-db", env: "prod", role: "asynchronous replica (eu-west)"},
	{name: "customer-db-prod-04", service: "customer-db", env: "prod", role: "reporting replica"},
	{name: "customer-db-prod-05", service: "customer-db", env: "prod", role: "primary (eu-central)"},
	{name: "customer-db-prod-06", service: "customer-db", env: "prod", role: "synchronous replica (eu-central)"},
	{name: "customer-db-prod-07", service: "customer-db", env: "prod", role: "asynchronous replica (eu-central)"},
	{name: "customer-db-prod-08", service: "customer-db", env: "prod", role: "delayed replica (6 h, for recovery)"},
	{name: "customer-db-prod-09", service: "customer-db", env: "prod", role: "connection pooler (pgbouncer)"},
	{name: "customer-db-prod-10", service: "customer-db", env: "prod", role: "backup and WAL archive", status: "maintenance"},
	{name: "customer-db-staging-01", service: "customer-db", env: "staging", role: "primary"},
	{name: "customer-db-staging-02", service: "customer-db", env: "staging", role: "replica"},
	{name: "customer-db-dev-01", service: "customer-db", env: "dev", role: "single node with synthetic data"},
	{name: "web-prod-01", service: "web-frontend", env: "prod", role: "web node"},
	{name: "web-prod-02", service: "web-frontend", env: "prod", role: "web node"},
	{name: "web-prod-03", service: "web-frontend", env: "prod", role: "web node"},
	{name: "web-prod-04", service: "web-frontend", env: "prod", role: "web node (canary)"},
	{name: "web-staging-01", service: "web-frontend", env: "staging", role: "web node"},
	{name: "payments-api-prod-01", service: "payments-api", env: "prod", role: "API node"},
	{name: "payments-api-prod-02", service: "payments-api", env: "prod", role: "API node"},
	{name: "payments-api-prod-03", service: "payments-api", env: "prod", role: "refund worker"},
	{name: "payments-api-staging-01", service: "payments-api", env: "staging", role: "API node"},
	{name: "search-prod-01", service: "search", env: "prod", role: "search node"},
	{name: "search-prod-02", service: "search", env: "prod", role: "search node"},
	{name: "monitoring-prod-01", service: "monitoring", env: "prod", role: "Prometheus and Alertmanager"},
	{name: "ldap-prod-01", service: "identity", env: "prod", role: "directory (primary)"},
	{name: "ldap-prod-02", service: "identity", env: "prod", role: "directory (replica)"},
	{name: "ci-runner-dev-01", service: "ci-runners", env: "dev", role: "build runner"},
	{name: "ci-runner-dev-02", service: "ci-runners", env: "dev", role: "build runner"},
	{name: "ci-runner-dev-03", service: "ci-runners", env: "dev", role: "build runner", status: "decommissioning"},
	{name: "mail-relay-prod-01", service: "mail-relay", env: "prod", role: "outbound relay"},
}

var envs = []string{"prod", "staging", "dev"}

// Inventory is the in-memory CMDB. It is read-only after construction.
type Inventory struct {
	byName map[string]*Asset
	sorted []*Asset
}

func newInventory() *Inventory {
	inv := &Inventory{byName: make(map[string]*Asset, len(hosts))}
	for i, h := range hosts {
		a := buildAsset(i, h)
		inv.byName[a.Hostname] = a
		inv.sorted = append(inv.sorted, a)
	}
	slices.SortFunc(inv.sorted, func(a, b *Asset) int { return strings.Compare(a.Hostname, b.Hostname) })
	return inv
}

func buildAsset(i int, h host) *Asset {
	svc := services[h.service]
	owner, email := svc.owner, svc.email
	if h.owner != "" {
		owner = h.owner
		email = strings.ToLower(strings.ReplaceAll(h.owner, " ", ".")) + "@example.com"
	}
	status := h.status
	if status == "" {
		status = "in-service"
	}
	criticality := svc.criticality
	if h.env != "prod" {
		criticality = "tier-3"
	}
	dc := map[string]string{"prod": "ams2", "staging": "fra1", "dev": "fra1"}[h.env]
	subnet := map[string]int{"prod": 10, "staging": 20, "dev": 30}[h.env]
	return &Asset{
		Hostname:    h.name,
		Service:     h.service,
		Env:         h.env,
		Role:        h.role,
		Owner:       owner,
		OwnerEmail:  email,
		Team:        svc.team,
		Criticality: criticality,
		Status:      status,
		OS:          svc.os,
		IPv4:        fmt.Sprintf("10.%d.%d.%d", subnet, 1+i/50, 10+i),
		Datacenter:  dc,
		Rack:        fmt.Sprintf("%s-r%02d-u%02d", dc, 1+i%12, 2+(i*7)%40),
		CPUCores:    svc.cpu,
		MemoryGB:    svc.memGB,
		DiskGB:      svc.diskGB,
		LastPatched: fmt.Sprintf("2026-%02d-%02d", 9+i%3, 1+(i*5)%28),
		Backup:      svc.backup,
		DependsOn:   slices.Clone(svc.dependsOn),
		Tags:        append([]string{"env:" + h.env, "dc:" + dc}, svc.tags...),
		Notes:       svc.notes,
	}
}

// Get returns the asset with exactly this hostname.
func (inv *Inventory) Get(hostname string) (*Asset, bool) {
	a, ok := inv.byName[hostname]
	return a, ok
}

// Find returns how many assets match the filters (an empty filter matches
// everything) and the first limit of them, by hostname.
func (inv *Inventory) Find(service, env string, limit int) (total int, found []*Asset) {
	found = []*Asset{}
	for _, a := range inv.sorted {
		if (service == "" || a.Service == service) && (env == "" || a.Env == env) {
			total++
			if len(found) < limit {
				found = append(found, a)
			}
		}
	}
	return total, found
}

// Services returns the service names, sorted.
func (inv *Inventory) Services() []string {
	return slices.Sorted(maps.Keys(services))
}
