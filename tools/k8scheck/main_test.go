package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Job that passes every check; the cases below break it one way each.
const goodJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: shards
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  backoffLimitPerIndex: 1
  podFailurePolicy:
    rules:
      - action: FailJob
        onExitCodes: {containerName: hosteval, operator: In, values: [2]}
  template:
    spec:
      restartPolicy: Never
      securityContext: {runAsNonRoot: true, runAsUser: 10001}
      containers:
        - name: hosteval
          image: hosteval:dev
          resources:
            requests: {cpu: "1", memory: 512Mi}
            limits: {cpu: "2", memory: 1Gi}
          securityContext: {allowPrivilegeEscalation: false}
          volumeMounts:
            - {name: scenarios, mountPath: /scenarios}
            - {name: results, mountPath: /results}
      volumes:
        - name: scenarios
          configMap: {name: suite}
        - name: results
          persistentVolumeClaim: {claimName: results}
`

const others = `apiVersion: v1
kind: ConfigMap
metadata: {name: suite}
data: {suite.yaml: "name: x"}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: results}
spec:
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 1Gi}}
`

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		old, new string // a replacement in goodJob
		want     []string
	}{
		{name: "all good"},
		{name: "a misspelt field", old: "  parallelism: 2", new: "  paralellism: 2",
			want: []string{`unknown field "spec.paralellism"`}},
		{name: "a field at the wrong level", old: "      restartPolicy: Never", new: "      restartPolicy: Never\n      completions: 3",
			want: []string{`unknown field "spec.template.spec.completions"`}},
		{name: "a wrong type", old: "completions: 2", new: "completions: two",
			want: []string{"cannot unmarshal string into Go struct field JobSpec.spec.completions of type int32"}},
		{name: "a bad quantity", old: "memory: 1Gi", new: "memory: 1 GB",
			want: []string{"quantities must match the regular expression"}},
		{name: "indexed without completions", old: "  completions: 2\n  parallelism: 2\n", new: "",
			want: []string{"spec.completions: required (at least 1) when completionMode is Indexed"}},
		{name: "more pods than completions", old: "parallelism: 2", new: "parallelism: 3",
			want: []string{"spec.parallelism 3 is more than spec.completions 2"}},
		{name: "restart policy Always", old: "restartPolicy: Never", new: "restartPolicy: Always",
			want: []string{`restartPolicy "Always": a Job's pods want Never or OnFailure`, "spec.podFailurePolicy: needs restartPolicy Never"}},
		{name: "a failure policy naming no container", old: "containerName: hosteval", new: "containerName: runner",
			want: []string{`onExitCodes.containerName "runner": no such container`}},
		{name: "root", old: "runAsNonRoot: true, runAsUser: 10001", new: "runAsUser: 0",
			want: []string{"containers[0]: must run as a non-root user"}},
		{name: "privilege escalation", old: "allowPrivilegeEscalation: false", new: "allowPrivilegeEscalation: true",
			want: []string{"allowPrivilegeEscalation: must be false"}},
		{name: "no memory limit, request above limit", old: "limits: {cpu: \"2\", memory: 1Gi}", new: "limits: {cpu: 500m}",
			want: []string{"resources.requests.cpu 1 is above the limit 500m", "resources.limits.memory: required"}},
		{name: "a mount of no volume", old: "{name: results, mountPath: /results}", new: "{name: result, mountPath: /results}",
			want: []string{`volumeMounts[1]: no volume "result"`}},
		{name: "a ConfigMap not among the manifests", old: "configMap: {name: suite}", new: "configMap: {name: scenarios}",
			want: []string{`ConfigMap "scenarios" is not among the manifests`}},
		{name: "a claim not among the manifests", old: "claimName: results", new: "claimName: shared",
			want: []string{`PersistentVolumeClaim "shared" is not among the manifests`}},
		{name: "a bad name", old: "name: shards", new: "name: Shards_1",
			want: []string{`metadata.name "Shards_1": a lowercase RFC 1123 subdomain`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := goodJob
			if tt.old != "" {
				if !strings.Contains(job, tt.old) {
					t.Fatalf("the good Job has no %q", tt.old)
				}
				job = strings.Replace(job, tt.old, tt.new, 1)
			}
			dec := newDecoder()
			objs, problems := decode(dec, "job.yaml", []byte(job))
			o2, p2 := decode(dec, "others.yaml", []byte(others))
			objs, problems = append(objs, o2...), append(problems, p2...)
			problems = append(problems, check(objs)...)
			if len(problems) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(problems), len(tt.want), strings.Join(problems, "\n"))
			}
			for i, w := range tt.want {
				if !strings.Contains(problems[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, problems[i], w)
				}
			}
		})
	}
}

// Problems name the file and the line of the document they are in.
func TestLines(t *testing.T) {
	data := "# a comment\n" + others + "---\n\n# the job\n" + strings.Replace(goodJob, "image: hosteval:dev", "imag: hosteval:dev", 1)
	objs, problems := decode(newDecoder(), "all.yaml", []byte(data))
	if len(objs) != 3 {
		t.Fatalf("decoded %d objects, want 3", len(objs))
	}
	var wantLines []int // the lines of the apiVersion fields
	for i, l := range strings.Split(data, "\n") {
		if strings.HasPrefix(l, "apiVersion:") {
			wantLines = append(wantLines, i+1)
		}
	}
	for i, o := range objs {
		if o.line != wantLines[i] {
			t.Errorf("object %d (%s/%s) at line %d, want %d", i, o.kind, o.name, o.line, wantLines[i])
		}
	}
	if want := fmt.Sprintf("all.yaml:%d: Job shards:", wantLines[2]); len(problems) != 1 || !strings.HasPrefix(problems[0], want) ||
		!strings.Contains(problems[0], `unknown field "spec.template.spec.containers[0].imag"`) {
		t.Errorf("problems = %q, want one unknown field at %s", problems, want)
	}
}

// The recipes of deploy/kubernetes pass, end to end through the command.
func TestRepositoryManifests(t *testing.T) {
	dir := filepath.Join("..", "..", "deploy", "kubernetes")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no %s: %v", dir, err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("k8scheck %s: exit %d\n%s", dir, code, stderr.String())
	}
	for _, want := range []string{"Job/hosteval-shards", "Job/hosteval-merge", "ConfigMap/hosteval-scenarios", "PersistentVolumeClaim/hosteval-results"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %s:\n%s", want, stdout.String())
		}
	}
}
