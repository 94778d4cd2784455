{{- /* NOTES.txt, as a named template so that the tests can render it with helm template --api-versions (helm install --dry-run has no such flag). */}}
{{- define "monapi-exporter.notes" -}}
monapi-exporter {{ .Chart.AppVersion }} is installed as {{ include "monapi-exporter.fullname" . }} in namespace {{ .Release.Namespace }}.
{{- $accounts := list }}
{{- range .Values.config.accounts }}{{ $accounts = append $accounts .name }}{{ end }}
{{- if .Values.sharding.enabled }}

Sharding: a StatefulSet of {{ .Values.replicas }} pod(s); pod N polls the accounts whose names hash to N
({{ len $accounts }} account(s): {{ join ", " $accounts }}). Change the number of shards with
--set replicas=N (never kubectl scale: the pods would disagree on the total). Which accounts a pod
polls is in its /status:
  kubectl -n {{ .Release.Namespace }} port-forward pod/{{ include "monapi-exporter.fullname" . }}-0 9866 &
  curl -s http://127.0.0.1:9866/status
{{- else }}

One pod polls {{ len $accounts }} account(s): {{ join ", " $accounts }}.
{{- end }}

Check that it reads its configuration and keys (pods restart with the error otherwise):
  kubectl -n {{ .Release.Namespace }} logs {{ if .Values.sharding.enabled }}statefulset{{ else }}deployment{{ end }}/{{ include "monapi-exporter.fullname" . }}

Look at the metrics:
  kubectl -n {{ .Release.Namespace }} port-forward svc/{{ include "monapi-exporter.fullname" . }} {{ .Values.service.port }} &
  curl -s http://127.0.0.1:{{ .Values.service.port }}{{ .Values.telemetryPath }} | head
/-/ready answers 503 until the first complete polling cycle; /metrics serves what has been polled so far.
{{- if and .Values.serviceMonitor.enabled (include "monapi-exporter.servesMonitoringKind" (list . "ServiceMonitor")) }}

A ServiceMonitor asks the Prometheus Operator to scrape it{{ with .Values.serviceMonitor.labels }} (labels: {{ toYaml . | replace "\n" ", " }}){{ end }}.
Your Prometheus must select ServiceMonitors with these labels (serviceMonitorSelector).
{{- else if .Values.serviceMonitor.enabled }}

WARNING: serviceMonitor.enabled is true, but the cluster does not serve monitoring.coreos.com/v1
ServiceMonitor (the Prometheus Operator's CRDs are not installed): no ServiceMonitor was made, so
nothing scrapes the exporter yet. Install the CRDs, then run helm upgrade. (With helm template,
pass --api-versions monitoring.coreos.com/v1/ServiceMonitor.)
{{- else }}

No ServiceMonitor: add a scrape job for the Service, or set serviceMonitor.enabled=true with the
Prometheus Operator.
{{- end }}
{{- if and .Values.prometheusRule.enabled (not (include "monapi-exporter.servesMonitoringKind" (list . "PrometheusRule"))) }}

WARNING: prometheusRule.enabled is true, but the cluster does not serve monitoring.coreos.com/v1
PrometheusRule (the Prometheus Operator's CRDs are not installed): no PrometheusRule was made, so
no alert rule is loaded. Install the CRDs, then run helm upgrade; or add
alerts/monapi-exporter.rules.yaml to your Prometheus' rule_files. (With helm template, pass
--api-versions monitoring.coreos.com/v1/PrometheusRule.)
{{- end }}
{{- if .Values.existingSecret }}

Keys come from the Secret {{ .Values.existingSecret }} (an entry per account name).
{{- end }}
{{- if .Values.rollOnConfigChange }}

A changed configuration{{ if not .Values.existingSecret }} or key{{ end }} rolls the pods (rollOnConfigChange).
{{- else }}

A changed configuration or key file reaches the running exporter without a restart: Kubernetes
updates the mounted ConfigMap and Secret within about a minute and the exporter reloads them
(monapi_exporter_config_last_reload_successful says whether the last reload worked). Keys passed
as environment variables (extraEnv) need a restart:
  kubectl -n {{ .Release.Namespace }} rollout restart {{ if .Values.sharding.enabled }}statefulset{{ else }}deployment{{ end }}/{{ include "monapi-exporter.fullname" . }}
{{- end }}

{{- end }}
