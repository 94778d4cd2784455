{{/* Names and labels. */}}
{{- define "monapi-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "monapi-exporter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "monapi-exporter.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Stable across upgrades: selectors never carry the chart or app version. */}}
{{- define "monapi-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "monapi-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Labels of every object: the standard ones win over commonLabels, so a common label can never
change a name or instance. labelsWith adds an object's own labels (service.labels, ...), which
win over commonLabels. Built as maps, so no key is ever written twice.
*/}}
{{- define "monapi-exporter.standardLabels" -}}
helm.sh/chart: {{ include "monapi-exporter.chart" . }}
{{ include "monapi-exporter.selectorLabels" . }}
app.kubernetes.io/component: exporter
app.kubernetes.io/part-of: monapi-exporter
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "monapi-exporter.labels" -}}
{{- include "monapi-exporter.labelsWith" (list . dict) }}
{{- end }}

{{- define "monapi-exporter.labelsWith" -}}
{{- $root := index . 0 }}
{{- $standard := include "monapi-exporter.standardLabels" $root | fromYaml }}
{{- toYaml (merge $standard (deepCopy (index . 1 | default dict)) (deepCopy ($root.Values.commonLabels | default dict))) }}
{{- end }}

{{- define "monapi-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "monapi-exporter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "monapi-exporter.image" -}}
{{- $repository := .Values.image.repository }}
{{- if .Values.image.registry }}
{{- $repository = printf "%s/%s" .Values.image.registry .Values.image.repository }}
{{- end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{- define "monapi-exporter.secretName" -}}
{{- .Values.existingSecret | default (include "monapi-exporter.fullname" .) }}
{{- end }}

{{- define "monapi-exporter.keysDir" -}}/etc/monapi-exporter/keys{{- end }}
{{- define "monapi-exporter.marketplaceKeyName" -}}releases.marketplace{{- end }}

{{/*
The exporter's configuration as rendered into the ConfigMap: config from the values, with
every account (and the marketplace lookups) that names no key source pointed at its file in
the mounted Secret.
*/}}
{{- define "monapi-exporter.config" -}}
{{- $config := deepCopy .Values.config }}
{{- $keysDir := include "monapi-exporter.keysDir" . }}
{{- range $account := $config.accounts }}
{{- if not (or (hasKey $account "api_key_env") (hasKey $account "api_key_file")) }}
{{- $_ := set $account "api_key_file" (printf "%s/%s" $keysDir $account.name) }}
{{- end }}
{{- end }}
{{- $releases := $config.releases | default dict }}
{{- if and (eq (toString $releases.mode) "marketplace") (not (or (hasKey $releases "marketplace_key_env") (hasKey $releases "marketplace_key_file"))) }}
{{- $_ := set $releases "marketplace_key_file" (printf "%s/%s" $keysDir (include "monapi-exporter.marketplaceKeyName" .)) }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{/*
Checks the schema cannot express; each message says what to change. Included by the workload
template, so every render runs them.
*/}}
{{- define "monapi-exporter.validate" -}}
{{- if not .Values.config.accounts }}
{{- fail "config.accounts is empty: add at least one account (name and base_url), e.g. --set config.accounts[0].name=prod --set config.accounts[0].base_url=https://monitoring.example.com/api/v2; see docs/configuration.md" }}
{{- end }}
{{- if and (not .Values.sharding.enabled) (gt (int .Values.replicas) 1) }}
{{- fail (printf "replicas is %d without sharding: every pod would poll every API key and spend its rate budget %d times. Keep replicas: 1 and scrape it from two Prometheus servers for high availability, or set sharding.enabled: true to spread the accounts over the pods" (int .Values.replicas) (int .Values.replicas)) }}
{{- end }}
{{- $names := list }}
{{- range $i, $account := .Values.config.accounts }}
{{- $names = append $names $account.name }}
{{- $keyed := or (hasKey $account "api_key_env") (hasKey $account "api_key_file") }}
{{- if and (not $keyed) (not $.Values.existingSecret) (not (hasKey $.Values.apiKeys $account.name)) }}
{{- fail (printf "config.accounts[%d] (%s) has no API key: set apiKeys.%s, or existingSecret naming a Secret with an entry %q, or api_key_env / api_key_file in the account" $i $account.name $account.name $account.name) }}
{{- end }}
{{- end }}
{{- range $name, $_ := .Values.apiKeys }}
{{- if not (has $name $names) }}
{{- fail (printf "apiKeys.%s names no account in config.accounts (accounts: %s)" $name (join ", " $names)) }}
{{- end }}
{{- end }}
{{- if and .Values.existingSecret (or .Values.apiKeys .Values.marketplaceKey) }}
{{- fail "existingSecret is set, so the chart makes no Secret: leave apiKeys and marketplaceKey empty and put the keys in that Secret" }}
{{- end }}
{{- $releases := .Values.config.releases | default dict }}
{{- if and (eq (toString $releases.mode) "marketplace") (not (or (hasKey $releases "marketplace_key_env") (hasKey $releases "marketplace_key_file") .Values.marketplaceKey .Values.existingSecret)) }}
{{- fail (printf "config.releases.mode is marketplace but no key is given: set marketplaceKey, or existingSecret with an entry %q" (include "monapi-exporter.marketplaceKeyName" .)) }}
{{- end }}
{{- end }}

{{/* The pod template shared by the Deployment and the StatefulSet. */}}
{{- define "monapi-exporter.podTemplate" -}}
metadata:
  labels:
    {{- $selector := include "monapi-exporter.selectorLabels" . | fromYaml }}
    {{- $_ := set $selector "app.kubernetes.io/component" "exporter" }}
    {{- toYaml (merge $selector (deepCopy .Values.podLabels) (deepCopy .Values.commonLabels)) | nindent 4 }}
  {{- /* The exporter reloads a changed ConfigMap or Secret in place; these annotations roll the pods instead. */}}
  {{- if or .Values.rollOnConfigChange .Values.podAnnotations }}
  annotations:
    {{- if .Values.rollOnConfigChange }}
    checksum/config: {{ include "monapi-exporter.config" . | sha256sum }}
    {{- if not .Values.existingSecret }}
    checksum/secret: {{ printf "%v|%s" .Values.apiKeys .Values.marketplaceKey | sha256sum }}
    {{- end }}
    {{- end }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
spec:
  serviceAccountName: {{ include "monapi-exporter.serviceAccountName" . }}
  automountServiceAccountToken: {{ .Values.automountServiceAccountToken }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  {{- with .Values.initContainers }}
  initContainers:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: exporter
      image: {{ include "monapi-exporter.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - --config.file=/etc/monapi-exporter/config/config.yaml
        - --web.listen-address=:9866
        - --web.telemetry-path={{ .Values.telemetryPath }}
        - --log.level={{ .Values.logLevel }}
        - --log.format=json
        - --web.serving-threads={{ .Values.servingThreads }}
        {{- if .Values.sharding.enabled }}
        - --total-shards={{ .Values.replicas }}
        {{- end }}
        {{- if .Values.state.enabled }}
        - --state.file=/var/lib/monapi-exporter/state.json
        {{- end }}
        {{- if include "monapi-exporter.webConfigEnabled" . }}
        - --web.config.file=/etc/monapi-exporter/web/web-config.yml
        {{- end }}
        {{- if .Values.probePort }}
        - --web.probe-listen-address=:{{ .Values.probePort }}
        {{- end }}
        {{- with .Values.extraArgs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- if or .Values.sharding.enabled .Values.extraEnv }}
      env:
        {{- if .Values.sharding.enabled }}
        # The shard is the ordinal suffix of the StatefulSet pod's name.
        - name: MONAPI_SHARD_POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
      {{- with .Values.extraEnvFrom }}
      envFrom:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      ports:
        - name: http-metrics
          containerPort: 9866
          protocol: TCP
        {{- if .Values.probePort }}
        - name: probes
          containerPort: {{ .Values.probePort }}
          protocol: TCP
        {{- end }}
      {{- if .Values.startupProbe.enabled }}
      startupProbe:
        {{- include "monapi-exporter.probe" (list . (omit .Values.startupProbe "enabled")) | nindent 8 }}
      {{- end }}
      livenessProbe:
        {{- include "monapi-exporter.probe" (list . .Values.livenessProbe) | nindent 8 }}
      readinessProbe:
        {{- include "monapi-exporter.probe" (list . .Values.readinessProbe) | nindent 8 }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      {{- with .Values.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: config
          mountPath: /etc/monapi-exporter/config
          readOnly: true
        - name: keys
          mountPath: {{ include "monapi-exporter.keysDir" . }}
          readOnly: true
        {{- if .Values.state.enabled }}
        - name: state
          mountPath: /var/lib/monapi-exporter
        {{- end }}
        {{- if include "monapi-exporter.webConfigEnabled" . }}
        - name: web
          mountPath: /etc/monapi-exporter/web
          readOnly: true
        {{- end }}
        {{- with .Values.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    {{- with .Values.extraContainers }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "monapi-exporter.fullname" . }}
    - name: keys
      secret:
        secretName: {{ include "monapi-exporter.secretName" . }}
        defaultMode: 0440
    {{- if and .Values.state.enabled (eq .Values.state.type "emptyDir") }}
    - name: state
      emptyDir:
        sizeLimit: {{ .Values.state.size }}
    {{- else if and .Values.state.enabled (not .Values.sharding.enabled) }}
    - name: state
      persistentVolumeClaim:
        claimName: {{ .Values.state.existingClaim | default (printf "%s-state" (include "monapi-exporter.fullname" .)) }}
    {{- end }}
    {{- if include "monapi-exporter.webConfigEnabled" . }}
    - name: web
      projected:
        defaultMode: 0440
        sources:
          - secret:
              name: {{ .Values.webConfig.existingSecret | default (printf "%s-web" (include "monapi-exporter.fullname" .)) }}
          {{- with .Values.webConfig.tlsSecret }}
          - secret:
              name: {{ . }}
          {{- end }}
    {{- end }}
    {{- with .Values.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with include "monapi-exporter.affinity" . | fromYaml }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}


{{/* Non-empty when the exporter gets --web.config.file. */}}
{{- define "monapi-exporter.webConfigEnabled" -}}
{{- if or .Values.webConfig.existingSecret .Values.webConfig.config }}true{{ end }}
{{- end }}

{{/* Non-empty when the web configuration turns TLS on (the probes and the ServiceMonitor then speak HTTPS). */}}
{{- define "monapi-exporter.tls" -}}
{{- if or (and .Values.webConfig.config (hasKey .Values.webConfig.config "tls_server_config")) (eq .Values.serviceMonitor.scheme "https") }}true{{ end }}
{{- end }}

{{/* A probe from the values, over HTTPS when TLS is on (kubelet does not check the certificate). */}}
{{- define "monapi-exporter.probe" -}}
{{- $root := index . 0 -}}
{{- $probe := deepCopy (index . 1) -}}
{{- if and $root.Values.probePort $probe.httpGet (eq (toString $probe.httpGet.port) "http-metrics") -}}
{{- $_ := set $probe.httpGet "port" "probes" -}}
{{- else if and (include "monapi-exporter.tls" $root) $probe.httpGet -}}
{{- $_ := set $probe.httpGet "scheme" "HTTPS" -}}
{{- end -}}
{{- toYaml $probe -}}
{{- end }}

{{/*
Whether the cluster serves a prometheus-operator kind: `helm install` and `upgrade` see the
cluster's APIs; `helm template` and `--dry-run=client` see only what --api-versions adds
(monitoring.coreos.com/v1 or monitoring.coreos.com/v1/<Kind>).
*/}}
{{- define "monapi-exporter.servesMonitoringKind" -}}
{{- $root := index . 0 -}}
{{- $kind := index . 1 -}}
{{- if or ($root.Capabilities.APIVersions.Has (printf "monitoring.coreos.com/v1/%s" $kind)) ($root.Capabilities.APIVersions.Has "monitoring.coreos.com/v1") }}true{{ end -}}
{{- end }}

{{/*
The exporter pod's affinity: the values' affinity, and for the shards of a sharded install a pod
anti-affinity that spreads them over nodes (sharding.podAntiAffinity: soft prefers it, hard
requires it), so that losing one node takes at most one shard's accounts. An
affinity.podAntiAffinity of the values replaces it.
*/}}
{{- define "monapi-exporter.affinity" -}}
{{- $affinity := deepCopy (.Values.affinity | default dict) }}
{{- $preset := .Values.sharding.podAntiAffinity }}
{{- if and .Values.sharding.enabled $preset (not (hasKey $affinity "podAntiAffinity")) }}
{{- $selector := include "monapi-exporter.selectorLabels" . | fromYaml }}
{{- $_ := set $selector "app.kubernetes.io/component" "exporter" }}
{{- $term := dict "labelSelector" (dict "matchLabels" $selector) "topologyKey" .Values.sharding.topologyKey }}
{{- if eq $preset "hard" }}
{{- $_ := set $affinity "podAntiAffinity" (dict "requiredDuringSchedulingIgnoredDuringExecution" (list $term)) }}
{{- else }}
{{- $_ := set $affinity "podAntiAffinity" (dict "preferredDuringSchedulingIgnoredDuringExecution" (list (dict "weight" 100 "podAffinityTerm" $term))) }}
{{- end }}
{{- end }}
{{- if $affinity }}{{ toYaml $affinity }}{{ end }}
{{- end }}

{{/*
The checks of the field's linters (docs/helm-chart.md, "Linters") that a workload of this chart
fails on purpose, as annotations of the object, each with its reason as a comment above it:
kube-score's kube-score/ignore (test/ship/chart-linters.test.ts scores every ci values file),
and kube-linter's ignore-check.kube-linter.io/<check>. Argument: (list root kind), kind
Deployment, StatefulSet or Job.
*/}}
{{- define "monapi-exporter.linterExceptions" -}}
{{- $root := index . 0 }}
{{- $kind := index . 1 }}
{{- $ignore := list }}
{{- $why := list }}
{{- if ne $root.Values.image.pullPolicy "Always" }}
{{- $ignore = append $ignore "container-image-pull-policy" }}
{{- $why = append $why (printf "container-image-pull-policy: image.pullPolicy is %s: the image is pinned by its version tag or digest, so a pod starts without asking the registry. Set image.pullPolicy: Always where nodes are shared and imagePullSecrets must be checked at every start." $root.Values.image.pullPolicy) }}
{{- end }}
{{- if not $root.Values.networkPolicy.enabled }}
{{- $ignore = append $ignore "pod-networkpolicy" }}
{{- $why = append $why "pod-networkpolicy: networkPolicy.enabled is false (the default): its policy allows egress only to DNS and networkPolicy.egress.ports, which a proxy, another upstream port or a remote write receiver must be added to first." }}
{{- end }}
{{- if and (eq $kind "Deployment") (ne (toString $root.Values.deploymentStrategy.type) "RollingUpdate") }}
{{- $ignore = append $ignore "deployment-strategy" }}
{{- $why = append $why "deployment-strategy: Recreate, so that two pods never spend one API key's budget." }}
{{- end }}
{{- if eq $kind "Deployment" }}
{{- $ignore = append $ignore "deployment-replicas" }}
{{- $why = append $why "deployment-replicas: one pod, as every pod polls every API key; sharding spreads the accounts over the pods of a StatefulSet instead." }}
{{- end }}
{{- if $ignore }}
# kube-score checks this object fails on purpose:
{{- range $why }}
# - {{ wrap 92 . | replace "\n" "\n#   " }}
{{- end }}
kube-score/ignore: {{ join "," $ignore }}
{{- end }}
{{- $serviceAccount := include "monapi-exporter.serviceAccountName" $root }}
{{- if and (not $root.Values.serviceAccount.create) (ne $serviceAccount "default") }}
# kube-linter cannot see the ServiceAccount: serviceAccount.create is false, it is made outside the chart.
ignore-check.kube-linter.io/non-existent-service-account: {{ printf "serviceAccount.create is false: %s is made outside the chart" $serviceAccount | quote }}
{{- end }}
{{- end }}
