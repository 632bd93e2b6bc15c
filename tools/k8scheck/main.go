// Command k8scheck validates Kubernetes manifests offline, for `make
// lint-k8s`: kubeconform would download its JSON schemas from GitHub at run
// time, which this project's machines cannot reach.
//
// Each YAML document is decoded strictly into the Kubernetes API types of
// k8s.io/api (the types the API server's OpenAPI schemas are generated
// from): an unknown or misspelt field, a duplicate field, a wrong type or a
// bad quantity is an error, as `kubectl apply --validate=strict` would say.
// Then the rules of the API server's validation that these manifests rely on
// are checked (names, a Job's completion mode and failure policy, volumes and
// mounts, resources), with the house rules of hosteval's recipes: every
// container runs as a non-root user without privilege escalation and has
// CPU and memory requests and limits, and every ConfigMap and
// PersistentVolumeClaim a pod mounts is defined among the manifests. The API
// server's own validation code lives in k8s.io/kubernetes, which is not
// importable as a module, hence the re-statement.
//
// It has its own go.mod so that hosteval's module does not grow.
//
// usage: go run . DIR|FILE...
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: k8scheck DIR|FILE...")
		return 2
	}
	files, err := manifestFiles(args)
	if err != nil {
		fmt.Fprintln(stderr, "k8scheck:", err)
		return 2
	}
	objs, problems := decodeFiles(files)
	problems = append(problems, check(objs)...)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		fmt.Fprintf(stderr, "k8scheck: %d problems in %d manifests\n", len(problems), len(objs))
		return 1
	}
	for _, o := range objs {
		fmt.Fprintf(stdout, "ok  %-45s %s/%s\n", o.where(), o.kind, o.name)
	}
	fmt.Fprintf(stdout, "k8scheck: %d manifests valid against the k8s.io/api types\n", len(objs))
	return 0
}

// manifestFiles lists the YAML files of the given folders (not recursively,
// as kubectl apply -f DIR) and files.
func manifestFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(a, e.Name()))
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no manifests (*.yaml, *.yml) in %s", strings.Join(args, " "))
	}
	return files, nil
}

// object is one decoded manifest and where it came from.
type object struct {
	file string
	line int // the first line of its YAML document
	kind string
	name string
	obj  runtime.Object
}

func (o object) where() string { return fmt.Sprintf("%s:%d", o.file, o.line) }

// problem is one finding, named by file, line and object.
func (o object) problem(format string, args ...any) string {
	return fmt.Sprintf("%s: %s %s: %s", o.where(), o.kind, o.name, fmt.Sprintf(format, args...))
}

func newDecoder() runtime.Decoder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err) // the scheme of two built-in groups always registers
		}
	}
	return json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme,
		json.SerializerOptions{Yaml: true, Strict: true})
}

func decodeFiles(files []string) ([]object, []string) {
	dec := newDecoder()
	var objs []object
	var problems []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		o, p := decode(dec, file, data)
		objs = append(objs, o...)
		problems = append(problems, p...)
	}
	return objs, problems
}

// decode splits a file into its YAML documents and decodes each strictly.
func decode(dec runtime.Decoder, file string, data []byte) ([]object, []string) {
	var objs []object
	var problems []string
	for _, d := range splitDocuments(data) {
		obj, gvk, err := dec.Decode(d.data, nil, nil)
		o := object{file: file, line: d.line}
		if gvk != nil {
			o.kind = gvk.Kind
		}
		if m, ok := obj.(interface{ GetName() string }); ok && obj != nil {
			o.name = m.GetName()
		}
		if err != nil {
			// A strict error (unknown or duplicate fields) comes with the
			// object; any other with none.
			problems = append(problems, fmt.Sprintf("%s:%d: %s %s: %v", file, d.line, o.kind, o.name, err))
			if !runtime.IsStrictDecodingError(err) || obj == nil {
				continue
			}
		}
		o.obj = obj
		objs = append(objs, o)
	}
	return objs, problems
}

// document is one YAML document of a file, and the line of its first
// content (neither blank nor a comment).
type document struct {
	data []byte
	line int
}

// splitDocuments splits a file on its "---" lines, dropping documents
// without content, and keeps the line numbers for the messages.
func splitDocuments(data []byte) []document {
	var docs []document
	cur := document{}
	flush := func() {
		if cur.line > 0 {
			docs = append(docs, cur)
		}
		cur = document{}
	}
	for i, l := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSpace(l)
		if t == "---" || strings.HasPrefix(t, "--- #") {
			flush()
			continue
		}
		cur.data = append(cur.data, l...)
		if cur.line == 0 && t != "" && !strings.HasPrefix(t, "#") {
			cur.line = i + 1
		}
	}
	flush()
	return docs
}

// check applies the API server's rules these manifests rely on, and the
// house rules, across all objects (a pod's ConfigMap must be among them).
func check(objs []object) []string {
	var problems []string
	defined := map[string]bool{} // "ConfigMap/name", "PersistentVolumeClaim/name"
	seen := map[string]object{}
	for _, o := range objs {
		key := o.kind + "/" + o.name
		if prev, dup := seen[key]; dup {
			problems = append(problems, o.problem("defined twice (also at %s)", prev.where()))
		}
		seen[key] = o
		defined[key] = true
	}
	for _, o := range objs {
		for _, msg := range validation.IsDNS1123Subdomain(o.name) {
			problems = append(problems, o.problem("metadata.name %q: %s", o.name, msg))
		}
		switch obj := o.obj.(type) {
		case *corev1.ConfigMap:
			problems = append(problems, labels(o, "metadata.labels", obj.Labels)...)
			for k := range obj.Data {
				for _, msg := range validation.IsConfigMapKey(k) {
					problems = append(problems, o.problem("data key %q: %s", k, msg))
				}
			}
		case *corev1.PersistentVolumeClaim:
			problems = append(problems, labels(o, "metadata.labels", obj.Labels)...)
			if len(obj.Spec.AccessModes) == 0 {
				problems = append(problems, o.problem("spec.accessModes: at least one is required"))
			}
			if q, ok := obj.Spec.Resources.Requests[corev1.ResourceStorage]; !ok || q.Sign() <= 0 {
				problems = append(problems, o.problem("spec.resources.requests.storage: required and above zero"))
			}
		case *batchv1.Job:
			problems = append(problems, labels(o, "metadata.labels", obj.Labels)...)
			problems = append(problems, checkJob(o, obj, defined)...)
		default:
			problems = append(problems, o.problem("k8scheck knows ConfigMap, PersistentVolumeClaim and Job, not %T", o.obj))
		}
	}
	return problems
}

func labels(o object, field string, l map[string]string) []string {
	var problems []string
	for k, v := range l {
		for _, msg := range validation.IsQualifiedName(k) {
			problems = append(problems, o.problem("%s key %q: %s", field, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			problems = append(problems, o.problem("%s[%q] = %q: %s", field, k, v, msg))
		}
	}
	return problems
}

func checkJob(o object, job *batchv1.Job, defined map[string]bool) []string {
	var problems []string
	s := job.Spec
	pod := s.Template.Spec
	indexed := s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion
	if s.CompletionMode != nil && !indexed && *s.CompletionMode != batchv1.NonIndexedCompletion {
		problems = append(problems, o.problem("spec.completionMode %q: want Indexed or NonIndexed", *s.CompletionMode))
	}
	if indexed && (s.Completions == nil || *s.Completions < 1) {
		problems = append(problems, o.problem("spec.completions: required (at least 1) when completionMode is Indexed"))
	}
	if s.Parallelism != nil && *s.Parallelism < 0 {
		problems = append(problems, o.problem("spec.parallelism: must not be negative"))
	}
	if s.Parallelism != nil && s.Completions != nil && *s.Parallelism > *s.Completions {
		problems = append(problems, o.problem("spec.parallelism %d is more than spec.completions %d: the extra pods never start", *s.Parallelism, *s.Completions))
	}
	if s.BackoffLimitPerIndex != nil && !indexed {
		problems = append(problems, o.problem("spec.backoffLimitPerIndex: only for completionMode Indexed"))
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever && pod.RestartPolicy != corev1.RestartPolicyOnFailure {
		problems = append(problems, o.problem("spec.template.spec.restartPolicy %q: a Job's pods want Never or OnFailure", pod.RestartPolicy))
	}
	if s.PodFailurePolicy != nil {
		if pod.RestartPolicy != corev1.RestartPolicyNever {
			problems = append(problems, o.problem("spec.podFailurePolicy: needs restartPolicy Never"))
		}
		for i, r := range s.PodFailurePolicy.Rules {
			if r.Action == batchv1.PodFailurePolicyActionFailIndex && s.BackoffLimitPerIndex == nil {
				problems = append(problems, o.problem("spec.podFailurePolicy.rules[%d]: FailIndex needs backoffLimitPerIndex", i))
			}
			if c := r.OnExitCodes; c != nil && c.ContainerName != nil &&
				!slices.ContainsFunc(pod.Containers, func(k corev1.Container) bool { return k.Name == *c.ContainerName }) {
				problems = append(problems, o.problem("spec.podFailurePolicy.rules[%d].onExitCodes.containerName %q: no such container", i, *c.ContainerName))
			}
		}
	}
	problems = append(problems, labels(o, "spec.template.metadata.labels", s.Template.Labels)...)
	return append(problems, checkPod(o, "spec.template.spec", pod, defined)...)
}

func checkPod(o object, at string, pod corev1.PodSpec, defined map[string]bool) []string {
	var problems []string
	if len(pod.Containers) == 0 {
		problems = append(problems, o.problem("%s.containers: at least one is required", at))
	}
	volumes := map[string]bool{}
	for i, v := range pod.Volumes {
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			problems = append(problems, o.problem("%s.volumes[%d].name %q: %s", at, i, v.Name, msg))
		}
		if volumes[v.Name] {
			problems = append(problems, o.problem("%s.volumes[%d].name %q: used twice", at, i, v.Name))
		}
		volumes[v.Name] = true
		if cm := v.ConfigMap; cm != nil && (cm.Optional == nil || !*cm.Optional) && !defined["ConfigMap/"+cm.Name] {
			problems = append(problems, o.problem("%s.volumes[%d]: ConfigMap %q is not among the manifests", at, i, cm.Name))
		}
		if pvc := v.PersistentVolumeClaim; pvc != nil && !defined["PersistentVolumeClaim/"+pvc.ClaimName] {
			problems = append(problems, o.problem("%s.volumes[%d]: PersistentVolumeClaim %q is not among the manifests", at, i, pvc.ClaimName))
		}
	}
	podNonRoot := pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot
	podUser := pod.SecurityContext != nil && pod.SecurityContext.RunAsUser != nil && *pod.SecurityContext.RunAsUser != 0
	names := map[string]bool{}
	for i, c := range pod.Containers {
		cat := fmt.Sprintf("%s.containers[%d]", at, i)
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			problems = append(problems, o.problem("%s.name %q: %s", cat, c.Name, msg))
		}
		if names[c.Name] {
			problems = append(problems, o.problem("%s.name %q: used twice", cat, c.Name))
		}
		names[c.Name] = true
		if c.Image == "" {
			problems = append(problems, o.problem("%s.image: required", cat))
		}
		mounts := map[string]bool{}
		for j, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				problems = append(problems, o.problem("%s.volumeMounts[%d]: no volume %q", cat, j, m.Name))
			}
			if !strings.HasPrefix(m.MountPath, "/") {
				problems = append(problems, o.problem("%s.volumeMounts[%d].mountPath %q: must be absolute", cat, j, m.MountPath))
			}
			if mounts[m.MountPath] {
				problems = append(problems, o.problem("%s.volumeMounts[%d].mountPath %q: mounted twice", cat, j, m.MountPath))
			}
			mounts[m.MountPath] = true
		}
		problems = append(problems, checkResources(o, cat+".resources", c.Resources)...)
		sc := c.SecurityContext
		nonRoot := podNonRoot || (sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot)
		if sc != nil && sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
			nonRoot = false
		}
		user := podUser || (sc != nil && sc.RunAsUser != nil && *sc.RunAsUser != 0)
		if sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			user = false
		}
		if !nonRoot || !user {
			problems = append(problems, o.problem("%s: must run as a non-root user (runAsNonRoot: true and a runAsUser other than 0)", cat))
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			problems = append(problems, o.problem("%s.securityContext.allowPrivilegeEscalation: must be false", cat))
		}
	}
	return problems
}

// checkResources wants CPU and memory requests and limits, each limit at
// least its request (the API server rejects a request above its limit).
func checkResources(o object, at string, r corev1.ResourceRequirements) []string {
	var problems []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := r.Requests[name]
		lim, hasLim := r.Limits[name]
		if !hasReq {
			problems = append(problems, o.problem("%s.requests.%s: required", at, name))
		}
		if !hasLim {
			problems = append(problems, o.problem("%s.limits.%s: required", at, name))
		}
		if hasReq && hasLim && req.Cmp(lim) > 0 {
			problems = append(problems, o.problem("%s.requests.%s %s is above the limit %s", at, name, req.String(), lim.String()))
		}
	}
	return problems
}
