// Code generated from crd-schema.json by `go test ./pkg/schema -update`. DO NOT EDIT.

package schema

import "k8s.io/kube-openapi/pkg/validation/spec"

// definitions is crd-schema.json's definitions, built as kube-openapi decodes them.
func definitions() spec.Definitions {
	v1AWSElasticBlockStoreVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.AWSElasticBlockStoreVolumeSource")
	v1Affinity := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.Affinity")
	v1AzureDiskVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.AzureDiskVolumeSource")
	v1AzureFileVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.AzureFileVolumeSource")
	v1CSIVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.CSIVolumeSource")
	v1Capabilities := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.Capabilities")
	v1CephFSVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.CephFSVolumeSource")
	v1CinderVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.CinderVolumeSource")
	v1ClientIPConfig := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ClientIPConfig")
	v1ConfigMapEnvSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ConfigMapEnvSource")
	v1ConfigMapKeySelector := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ConfigMapKeySelector")
	v1ConfigMapProjection := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ConfigMapProjection")
	v1ConfigMapVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ConfigMapVolumeSource")
	v1Container := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.Container")
	v1ContainerPort := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ContainerPort")
	v1ContainerState := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ContainerState")
	v1ContainerStateRunning := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ContainerStateRunning")
	v1ContainerStateTerminated := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ContainerStateTerminated")
	v1ContainerStateWaiting := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ContainerStateWaiting")
	v1ContainerStatus := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ContainerStatus")
	v1DownwardAPIProjection := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.DownwardAPIProjection")
	v1DownwardAPIVolumeFile := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.DownwardAPIVolumeFile")
	v1DownwardAPIVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.DownwardAPIVolumeSource")
	v1EmptyDirVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.EmptyDirVolumeSource")
	v1EnvFromSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.EnvFromSource")
	v1EnvVar := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.EnvVar")
	v1EnvVarSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.EnvVarSource")
	v1EphemeralContainer := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.EphemeralContainer")
	v1EphemeralVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.EphemeralVolumeSource")
	v1ExecAction := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ExecAction")
	v1FCVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.FCVolumeSource")
	v1FlexVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.FlexVolumeSource")
	v1FlockerVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.FlockerVolumeSource")
	v1GCEPersistentDiskVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.GCEPersistentDiskVolumeSource")
	v1GitRepoVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.GitRepoVolumeSource")
	v1GlusterfsVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.GlusterfsVolumeSource")
	v1HTTPGetAction := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.HTTPGetAction")
	v1HTTPHeader := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.HTTPHeader")
	v1Handler := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.Handler")
	v1HostAlias := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.HostAlias")
	v1HostPathVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.HostPathVolumeSource")
	v1ISCSIVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ISCSIVolumeSource")
	v1KeyToPath := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.KeyToPath")
	v1Lifecycle := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.Lifecycle")
	v1LoadBalancerIngress := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.LoadBalancerIngress")
	v1LoadBalancerStatus := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.LoadBalancerStatus")
	v1LocalObjectReference := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.LocalObjectReference")
	v1NFSVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.NFSVolumeSource")
	v1NodeAffinity := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.NodeAffinity")
	v1NodeSelector := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.NodeSelector")
	v1NodeSelectorRequirement := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.NodeSelectorRequirement")
	v1NodeSelectorTerm := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.NodeSelectorTerm")
	v1ObjectFieldSelector := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ObjectFieldSelector")
	v1ObjectReference := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ObjectReference")
	v1PersistentVolumeClaimCondition := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PersistentVolumeClaimCondition")
	v1PersistentVolumeClaimSpec := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PersistentVolumeClaimSpec")
	v1PersistentVolumeClaimStatus := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PersistentVolumeClaimStatus")
	v1PersistentVolumeClaimTemplate := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PersistentVolumeClaimTemplate")
	v1PersistentVolumeClaimVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PersistentVolumeClaimVolumeSource")
	v1PhotonPersistentDiskVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PhotonPersistentDiskVolumeSource")
	v1PodAffinity := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodAffinity")
	v1PodAffinityTerm := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodAffinityTerm")
	v1PodAntiAffinity := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodAntiAffinity")
	v1PodCondition := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodCondition")
	v1PodDNSConfig := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodDNSConfig")
	v1PodDNSConfigOption := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodDNSConfigOption")
	v1PodIP := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodIP")
	v1PodReadinessGate := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodReadinessGate")
	v1PodSecurityContext := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodSecurityContext")
	v1PodSpec := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodSpec")
	v1PodStatus := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodStatus")
	v1PodTemplateSpec := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PodTemplateSpec")
	v1PortStatus := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PortStatus")
	v1PortworxVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PortworxVolumeSource")
	v1PreferredSchedulingTerm := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.PreferredSchedulingTerm")
	v1Probe := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.Probe")
	v1ProjectedVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ProjectedVolumeSource")
	v1QuobyteVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.QuobyteVolumeSource")
	v1RBDVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.RBDVolumeSource")
	v1ResourceFieldSelector := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ResourceFieldSelector")
	v1ResourceRequirements := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ResourceRequirements")
	v1SELinuxOptions := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.SELinuxOptions")
	v1ScaleIOVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ScaleIOVolumeSource")
	v1SeccompProfile := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.SeccompProfile")
	v1SecretEnvSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.SecretEnvSource")
	v1SecretKeySelector := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.SecretKeySelector")
	v1SecretProjection := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.SecretProjection")
	v1SecretVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.SecretVolumeSource")
	v1SecurityContext := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.SecurityContext")
	v1ServiceAccountTokenProjection := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ServiceAccountTokenProjection")
	v1ServicePort := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ServicePort")
	v1ServiceSpec := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ServiceSpec")
	v1ServiceStatus := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.ServiceStatus")
	v1SessionAffinityConfig := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.SessionAffinityConfig")
	v1StorageOSVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.StorageOSVolumeSource")
	v1Sysctl := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.Sysctl")
	v1TCPSocketAction := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.TCPSocketAction")
	v1Toleration := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.Toleration")
	v1TopologySpreadConstraint := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.TopologySpreadConstraint")
	v1TypedLocalObjectReference := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.TypedLocalObjectReference")
	v1Volume := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.Volume")
	v1VolumeDevice := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.VolumeDevice")
	v1VolumeMount := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.VolumeMount")
	v1VolumeProjection := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.VolumeProjection")
	v1VsphereVirtualDiskVolumeSource := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.VsphereVirtualDiskVolumeSource")
	v1WeightedPodAffinityTerm := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.WeightedPodAffinityTerm")
	v1WindowsSecurityContextOptions := spec.MustCreateRef("#/definitions/io.k8s.api.core.v1.WindowsSecurityContextOptions")
	resourceQuantity := spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity")
	v1Condition := spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Condition")
	v1FieldsV1 := spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1")
	v1LabelSelector := spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")
	v1LabelSelectorRequirement := spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement")
	v1ManagedFieldsEntry := spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry")
	v1ObjectMeta := spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
	v1OwnerReference := spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference")
	v1Time := spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time")
	intstrIntOrString := spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString")
	v1alpha1ReplicatedJobPatch := spec.MustCreateRef("#/definitions/org.kubeflow.trainer.v1alpha1.ReplicatedJobPatch")
	v1alpha1RuntimePatch := spec.MustCreateRef("#/definitions/org.kubeflow.trainer.v1alpha1.RuntimePatch")
	v1alpha1TrainJobSpec := spec.MustCreateRef("#/definitions/org.kubeflow.trainer.v1alpha1.TrainJobSpec")
	v1PyTorchJobSpec := spec.MustCreateRef("#/definitions/org.kubeflow.v1.PyTorchJobSpec")
	v2beta1MPIJobSpec := spec.MustCreateRef("#/definitions/org.kubeflow.v2beta1.MPIJobSpec")
	v2beta1ReplicaSpec := spec.MustCreateRef("#/definitions/org.kubeflow.v2beta1.ReplicaSpec")
	typeArray := spec.StringOrArray{"array"}
	typeBoolean := spec.StringOrArray{"boolean"}
	typeInteger := spec.StringOrArray{"integer"}
	typeObject := spec.StringOrArray{"object"}
	typeString := spec.StringOrArray{"string"}
	return spec.Definitions{
		"io.k8s.api.core.v1.AWSElasticBlockStoreVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"volumeID"}, Properties: map[string]spec.Schema{
			"fsType":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"partition": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"readOnly":  {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"volumeID":  {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.Affinity": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"nodeAffinity":    {SchemaProps: spec.SchemaProps{Ref: v1NodeAffinity}},
			"podAffinity":     {SchemaProps: spec.SchemaProps{Ref: v1PodAffinity}},
			"podAntiAffinity": {SchemaProps: spec.SchemaProps{Ref: v1PodAntiAffinity}},
		}}},
		"io.k8s.api.core.v1.AzureDiskVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"diskName", "diskURI"}, Properties: map[string]spec.Schema{
			"cachingMode": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"diskName":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"diskURI":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"fsType":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"kind":        {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly":    {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.AzureFileVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"secretName", "shareName"}, Properties: map[string]spec.Schema{
			"readOnly":   {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"secretName": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"shareName":  {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.CSIVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"driver"}, Properties: map[string]spec.Schema{
			"driver":               {SchemaProps: spec.SchemaProps{Type: typeString}},
			"fsType":               {SchemaProps: spec.SchemaProps{Type: typeString}},
			"nodePublishSecretRef": {SchemaProps: spec.SchemaProps{Ref: v1LocalObjectReference}},
			"readOnly":             {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"volumeAttributes":     {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
		}}},
		"io.k8s.api.core.v1.Capabilities": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"add":  {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"drop": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
		}}},
		"io.k8s.api.core.v1.CephFSVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"monitors"}, Properties: map[string]spec.Schema{
			"monitors":   {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"path":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly":   {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"secretFile": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"secretRef":  {SchemaProps: spec.SchemaProps{Ref: v1LocalObjectReference}},
			"user":       {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.CinderVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"volumeID"}, Properties: map[string]spec.Schema{
			"fsType":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly":  {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"secretRef": {SchemaProps: spec.SchemaProps{Ref: v1LocalObjectReference}},
			"volumeID":  {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ClientIPConfig": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"timeoutSeconds": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
		}}},
		"io.k8s.api.core.v1.ConfigMap": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{"group": "", "kind": "ConfigMap", "version": "v1"}}}}, SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"binaryData": {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString, Format: "byte"}}}}},
			"data":       {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"immutable":  {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"kind":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"metadata":   {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
		}}},
		"io.k8s.api.core.v1.ConfigMapEnvSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"name":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"optional": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.ConfigMapKeySelector": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"key"}, Properties: map[string]spec.Schema{
			"key":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"name":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"optional": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.ConfigMapProjection": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"items":    {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1KeyToPath}}}}},
			"name":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"optional": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.ConfigMapVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"defaultMode": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"items":       {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1KeyToPath}}}}},
			"name":        {SchemaProps: spec.SchemaProps{Type: typeString}},
			"optional":    {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.Container": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"name"}, Properties: map[string]spec.Schema{
			"args":                     {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"command":                  {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"env":                      {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1EnvVar}}}}},
			"envFrom":                  {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1EnvFromSource}}}}},
			"image":                    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"imagePullPolicy":          {SchemaProps: spec.SchemaProps{Type: typeString}},
			"lifecycle":                {SchemaProps: spec.SchemaProps{Ref: v1Lifecycle}},
			"livenessProbe":            {SchemaProps: spec.SchemaProps{Ref: v1Probe}},
			"name":                     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"ports":                    {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-map-keys": []any{"containerPort", "protocol"}, "x-kubernetes-list-type": "map", "x-kubernetes-patch-merge-key": "containerPort", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1ContainerPort}}}}},
			"readinessProbe":           {SchemaProps: spec.SchemaProps{Ref: v1Probe}},
			"resources":                {SchemaProps: spec.SchemaProps{Ref: v1ResourceRequirements}},
			"securityContext":          {SchemaProps: spec.SchemaProps{Ref: v1SecurityContext}},
			"startupProbe":             {SchemaProps: spec.SchemaProps{Ref: v1Probe}},
			"stdin":                    {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"stdinOnce":                {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"terminationMessagePath":   {SchemaProps: spec.SchemaProps{Type: typeString}},
			"terminationMessagePolicy": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"tty":                      {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"volumeDevices":            {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "devicePath", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1VolumeDevice}}}}},
			"volumeMounts":             {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "mountPath", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1VolumeMount}}}}},
			"workingDir":               {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ContainerPort": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"containerPort"}, Properties: map[string]spec.Schema{
			"containerPort": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"hostIP":        {SchemaProps: spec.SchemaProps{Type: typeString}},
			"hostPort":      {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"name":          {SchemaProps: spec.SchemaProps{Type: typeString}},
			"protocol":      {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ContainerState": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"running":    {SchemaProps: spec.SchemaProps{Ref: v1ContainerStateRunning}},
			"terminated": {SchemaProps: spec.SchemaProps{Ref: v1ContainerStateTerminated}},
			"waiting":    {SchemaProps: spec.SchemaProps{Ref: v1ContainerStateWaiting}},
		}}},
		"io.k8s.api.core.v1.ContainerStateRunning": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"startedAt": {SchemaProps: spec.SchemaProps{Ref: v1Time}},
		}}},
		"io.k8s.api.core.v1.ContainerStateTerminated": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"exitCode"}, Properties: map[string]spec.Schema{
			"containerID": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"exitCode":    {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"finishedAt":  {SchemaProps: spec.SchemaProps{Ref: v1Time}},
			"message":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"reason":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"signal":      {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"startedAt":   {SchemaProps: spec.SchemaProps{Ref: v1Time}},
		}}},
		"io.k8s.api.core.v1.ContainerStateWaiting": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"message": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"reason":  {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ContainerStatus": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"name", "ready", "restartCount", "image", "imageID"}, Properties: map[string]spec.Schema{
			"containerID":  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"image":        {SchemaProps: spec.SchemaProps{Type: typeString}},
			"imageID":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"lastState":    {SchemaProps: spec.SchemaProps{Ref: v1ContainerState}},
			"name":         {SchemaProps: spec.SchemaProps{Type: typeString}},
			"ready":        {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"restartCount": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"started":      {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"state":        {SchemaProps: spec.SchemaProps{Ref: v1ContainerState}},
		}}},
		"io.k8s.api.core.v1.DownwardAPIProjection": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"items": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1DownwardAPIVolumeFile}}}}},
		}}},
		"io.k8s.api.core.v1.DownwardAPIVolumeFile": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"path"}, Properties: map[string]spec.Schema{
			"fieldRef":         {SchemaProps: spec.SchemaProps{Ref: v1ObjectFieldSelector}},
			"mode":             {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"path":             {SchemaProps: spec.SchemaProps{Type: typeString}},
			"resourceFieldRef": {SchemaProps: spec.SchemaProps{Ref: v1ResourceFieldSelector}},
		}}},
		"io.k8s.api.core.v1.DownwardAPIVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"defaultMode": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"items":       {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1DownwardAPIVolumeFile}}}}},
		}}},
		"io.k8s.api.core.v1.EmptyDirVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"medium":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"sizeLimit": {SchemaProps: spec.SchemaProps{Ref: resourceQuantity}},
		}}},
		"io.k8s.api.core.v1.EnvFromSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"configMapRef": {SchemaProps: spec.SchemaProps{Ref: v1ConfigMapEnvSource}},
			"prefix":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"secretRef":    {SchemaProps: spec.SchemaProps{Ref: v1SecretEnvSource}},
		}}},
		"io.k8s.api.core.v1.EnvVar": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"name"}, Properties: map[string]spec.Schema{
			"name":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"value":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"valueFrom": {SchemaProps: spec.SchemaProps{Ref: v1EnvVarSource}},
		}}},
		"io.k8s.api.core.v1.EnvVarSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"configMapKeyRef":  {SchemaProps: spec.SchemaProps{Ref: v1ConfigMapKeySelector}},
			"fieldRef":         {SchemaProps: spec.SchemaProps{Ref: v1ObjectFieldSelector}},
			"resourceFieldRef": {SchemaProps: spec.SchemaProps{Ref: v1ResourceFieldSelector}},
			"secretKeyRef":     {SchemaProps: spec.SchemaProps{Ref: v1SecretKeySelector}},
		}}},
		"io.k8s.api.core.v1.EphemeralContainer": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"name"}, Properties: map[string]spec.Schema{
			"args":                     {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"command":                  {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"env":                      {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1EnvVar}}}}},
			"envFrom":                  {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1EnvFromSource}}}}},
			"image":                    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"imagePullPolicy":          {SchemaProps: spec.SchemaProps{Type: typeString}},
			"lifecycle":                {SchemaProps: spec.SchemaProps{Ref: v1Lifecycle}},
			"livenessProbe":            {SchemaProps: spec.SchemaProps{Ref: v1Probe}},
			"name":                     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"ports":                    {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1ContainerPort}}}}},
			"readinessProbe":           {SchemaProps: spec.SchemaProps{Ref: v1Probe}},
			"resources":                {SchemaProps: spec.SchemaProps{Ref: v1ResourceRequirements}},
			"securityContext":          {SchemaProps: spec.SchemaProps{Ref: v1SecurityContext}},
			"startupProbe":             {SchemaProps: spec.SchemaProps{Ref: v1Probe}},
			"stdin":                    {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"stdinOnce":                {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"targetContainerName":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"terminationMessagePath":   {SchemaProps: spec.SchemaProps{Type: typeString}},
			"terminationMessagePolicy": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"tty":                      {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"volumeDevices":            {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "devicePath", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1VolumeDevice}}}}},
			"volumeMounts":             {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "mountPath", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1VolumeMount}}}}},
			"workingDir":               {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.EphemeralVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"volumeClaimTemplate": {SchemaProps: spec.SchemaProps{Ref: v1PersistentVolumeClaimTemplate}},
		}}},
		"io.k8s.api.core.v1.ExecAction": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"command": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
		}}},
		"io.k8s.api.core.v1.FCVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"fsType":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"lun":        {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"readOnly":   {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"targetWWNs": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"wwids":      {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
		}}},
		"io.k8s.api.core.v1.FlexVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"driver"}, Properties: map[string]spec.Schema{
			"driver":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"fsType":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"options":   {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"readOnly":  {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"secretRef": {SchemaProps: spec.SchemaProps{Ref: v1LocalObjectReference}},
		}}},
		"io.k8s.api.core.v1.FlockerVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"datasetName": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"datasetUUID": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.GCEPersistentDiskVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"pdName"}, Properties: map[string]spec.Schema{
			"fsType":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"partition": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"pdName":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly":  {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.GitRepoVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"repository"}, Properties: map[string]spec.Schema{
			"directory":  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"repository": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"revision":   {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.GlusterfsVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"endpoints", "path"}, Properties: map[string]spec.Schema{
			"endpoints": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"path":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly":  {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.HTTPGetAction": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"port"}, Properties: map[string]spec.Schema{
			"host":        {SchemaProps: spec.SchemaProps{Type: typeString}},
			"httpHeaders": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1HTTPHeader}}}}},
			"path":        {SchemaProps: spec.SchemaProps{Type: typeString}},
			"port":        {SchemaProps: spec.SchemaProps{Ref: intstrIntOrString}},
			"scheme":      {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.HTTPHeader": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"name", "value"}, Properties: map[string]spec.Schema{
			"name":  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"value": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.Handler": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"exec":      {SchemaProps: spec.SchemaProps{Ref: v1ExecAction}},
			"httpGet":   {SchemaProps: spec.SchemaProps{Ref: v1HTTPGetAction}},
			"tcpSocket": {SchemaProps: spec.SchemaProps{Ref: v1TCPSocketAction}},
		}}},
		"io.k8s.api.core.v1.HostAlias": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"hostnames": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"ip":        {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.HostPathVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"path"}, Properties: map[string]spec.Schema{
			"path": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"type": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ISCSIVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"targetPortal", "iqn", "lun"}, Properties: map[string]spec.Schema{
			"chapAuthDiscovery": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"chapAuthSession":   {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"fsType":            {SchemaProps: spec.SchemaProps{Type: typeString}},
			"initiatorName":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"iqn":               {SchemaProps: spec.SchemaProps{Type: typeString}},
			"iscsiInterface":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"lun":               {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"portals":           {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"readOnly":          {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"secretRef":         {SchemaProps: spec.SchemaProps{Ref: v1LocalObjectReference}},
			"targetPortal":      {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.KeyToPath": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"key", "path"}, Properties: map[string]spec.Schema{
			"key":  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"mode": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"path": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.Lifecycle": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"postStart": {SchemaProps: spec.SchemaProps{Ref: v1Handler}},
			"preStop":   {SchemaProps: spec.SchemaProps{Ref: v1Handler}},
		}}},
		"io.k8s.api.core.v1.LoadBalancerIngress": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"hostname": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"ip":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"ports":    {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-type": "atomic"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1PortStatus}}}}},
		}}},
		"io.k8s.api.core.v1.LoadBalancerStatus": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"ingress": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1LoadBalancerIngress}}}}},
		}}},
		"io.k8s.api.core.v1.LocalObjectReference": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"name": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.NFSVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"server", "path"}, Properties: map[string]spec.Schema{
			"path":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"server":   {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.NodeAffinity": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"preferredDuringSchedulingIgnoredDuringExecution": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1PreferredSchedulingTerm}}}}},
			"requiredDuringSchedulingIgnoredDuringExecution":  {SchemaProps: spec.SchemaProps{Ref: v1NodeSelector}},
		}}},
		"io.k8s.api.core.v1.NodeSelector": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"nodeSelectorTerms"}, Properties: map[string]spec.Schema{
			"nodeSelectorTerms": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1NodeSelectorTerm}}}}},
		}}},
		"io.k8s.api.core.v1.NodeSelectorRequirement": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"key", "operator"}, Properties: map[string]spec.Schema{
			"key":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"operator": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"values":   {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
		}}},
		"io.k8s.api.core.v1.NodeSelectorTerm": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"matchExpressions": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1NodeSelectorRequirement}}}}},
			"matchFields":      {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1NodeSelectorRequirement}}}}},
		}}},
		"io.k8s.api.core.v1.ObjectFieldSelector": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"fieldPath"}, Properties: map[string]spec.Schema{
			"apiVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"fieldPath":  {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ObjectReference": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"fieldPath":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"kind":            {SchemaProps: spec.SchemaProps{Type: typeString}},
			"name":            {SchemaProps: spec.SchemaProps{Type: typeString}},
			"namespace":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"resourceVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"uid":             {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PersistentVolumeClaim": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{"group": "", "kind": "PersistentVolumeClaim", "version": "v1"}}}}, SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"kind":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"metadata":   {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
			"spec":       {SchemaProps: spec.SchemaProps{Ref: v1PersistentVolumeClaimSpec}},
			"status":     {SchemaProps: spec.SchemaProps{Ref: v1PersistentVolumeClaimStatus}},
		}}},
		"io.k8s.api.core.v1.PersistentVolumeClaimCondition": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"type", "status"}, Properties: map[string]spec.Schema{
			"lastProbeTime":      {SchemaProps: spec.SchemaProps{Ref: v1Time}},
			"lastTransitionTime": {SchemaProps: spec.SchemaProps{Ref: v1Time}},
			"message":            {SchemaProps: spec.SchemaProps{Type: typeString}},
			"reason":             {SchemaProps: spec.SchemaProps{Type: typeString}},
			"status":             {SchemaProps: spec.SchemaProps{Type: typeString}},
			"type":               {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PersistentVolumeClaimSpec": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"accessModes":      {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"dataSource":       {SchemaProps: spec.SchemaProps{Ref: v1TypedLocalObjectReference}},
			"resources":        {SchemaProps: spec.SchemaProps{Ref: v1ResourceRequirements}},
			"selector":         {SchemaProps: spec.SchemaProps{Ref: v1LabelSelector}},
			"storageClassName": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"volumeMode":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"volumeName":       {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PersistentVolumeClaimStatus": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"accessModes": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"capacity":    {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: resourceQuantity}}}}},
			"conditions":  {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1PersistentVolumeClaimCondition}}}}},
			"phase":       {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PersistentVolumeClaimTemplate": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"spec"}, Properties: map[string]spec.Schema{
			"metadata": {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
			"spec":     {SchemaProps: spec.SchemaProps{Ref: v1PersistentVolumeClaimSpec}},
		}}},
		"io.k8s.api.core.v1.PersistentVolumeClaimVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"claimName"}, Properties: map[string]spec.Schema{
			"claimName": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly":  {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.PhotonPersistentDiskVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"pdID"}, Properties: map[string]spec.Schema{
			"fsType": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"pdID":   {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.Pod": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{"group": "", "kind": "Pod", "version": "v1"}}}}, SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"kind":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"metadata":   {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
			"spec":       {SchemaProps: spec.SchemaProps{Ref: v1PodSpec}},
			"status":     {SchemaProps: spec.SchemaProps{Ref: v1PodStatus}},
		}}},
		"io.k8s.api.core.v1.PodAffinity": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"preferredDuringSchedulingIgnoredDuringExecution": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1WeightedPodAffinityTerm}}}}},
			"requiredDuringSchedulingIgnoredDuringExecution":  {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1PodAffinityTerm}}}}},
		}}},
		"io.k8s.api.core.v1.PodAffinityTerm": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"topologyKey"}, Properties: map[string]spec.Schema{
			"labelSelector":     {SchemaProps: spec.SchemaProps{Ref: v1LabelSelector}},
			"namespaceSelector": {SchemaProps: spec.SchemaProps{Ref: v1LabelSelector}},
			"namespaces":        {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"topologyKey":       {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PodAntiAffinity": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"preferredDuringSchedulingIgnoredDuringExecution": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1WeightedPodAffinityTerm}}}}},
			"requiredDuringSchedulingIgnoredDuringExecution":  {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1PodAffinityTerm}}}}},
		}}},
		"io.k8s.api.core.v1.PodCondition": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"type", "status"}, Properties: map[string]spec.Schema{
			"lastProbeTime":      {SchemaProps: spec.SchemaProps{Ref: v1Time}},
			"lastTransitionTime": {SchemaProps: spec.SchemaProps{Ref: v1Time}},
			"message":            {SchemaProps: spec.SchemaProps{Type: typeString}},
			"reason":             {SchemaProps: spec.SchemaProps{Type: typeString}},
			"status":             {SchemaProps: spec.SchemaProps{Type: typeString}},
			"type":               {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PodDNSConfig": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"nameservers": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"options":     {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1PodDNSConfigOption}}}}},
			"searches":    {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
		}}},
		"io.k8s.api.core.v1.PodDNSConfigOption": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"name":  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"value": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PodIP": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"ip": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PodReadinessGate": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"conditionType"}, Properties: map[string]spec.Schema{
			"conditionType": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PodSecurityContext": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"fsGroup":             {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"fsGroupChangePolicy": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"runAsGroup":          {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"runAsNonRoot":        {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"runAsUser":           {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"seLinuxOptions":      {SchemaProps: spec.SchemaProps{Ref: v1SELinuxOptions}},
			"seccompProfile":      {SchemaProps: spec.SchemaProps{Ref: v1SeccompProfile}},
			"supplementalGroups":  {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}}}}},
			"sysctls":             {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1Sysctl}}}}},
			"windowsOptions":      {SchemaProps: spec.SchemaProps{Ref: v1WindowsSecurityContextOptions}},
		}}},
		"io.k8s.api.core.v1.PodSpec": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"containers"}, Properties: map[string]spec.Schema{
			"activeDeadlineSeconds":         {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"affinity":                      {SchemaProps: spec.SchemaProps{Ref: v1Affinity}},
			"automountServiceAccountToken":  {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"containers":                    {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1Container}}}}},
			"dnsConfig":                     {SchemaProps: spec.SchemaProps{Ref: v1PodDNSConfig}},
			"dnsPolicy":                     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"enableServiceLinks":            {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"ephemeralContainers":           {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1EphemeralContainer}}}}},
			"hostAliases":                   {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "ip", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1HostAlias}}}}},
			"hostIPC":                       {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"hostNetwork":                   {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"hostPID":                       {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"hostname":                      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"imagePullSecrets":              {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1LocalObjectReference}}}}},
			"initContainers":                {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1Container}}}}},
			"nodeName":                      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"nodeSelector":                  {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"overhead":                      {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: resourceQuantity}}}}},
			"preemptionPolicy":              {SchemaProps: spec.SchemaProps{Type: typeString}},
			"priority":                      {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"priorityClassName":             {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readinessGates":                {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1PodReadinessGate}}}}},
			"restartPolicy":                 {SchemaProps: spec.SchemaProps{Type: typeString}},
			"runtimeClassName":              {SchemaProps: spec.SchemaProps{Type: typeString}},
			"schedulerName":                 {SchemaProps: spec.SchemaProps{Type: typeString}},
			"securityContext":               {SchemaProps: spec.SchemaProps{Ref: v1PodSecurityContext}},
			"serviceAccount":                {SchemaProps: spec.SchemaProps{Type: typeString}},
			"serviceAccountName":            {SchemaProps: spec.SchemaProps{Type: typeString}},
			"setHostnameAsFQDN":             {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"shareProcessNamespace":         {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"subdomain":                     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"terminationGracePeriodSeconds": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"tolerations":                   {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1Toleration}}}}},
			"topologySpreadConstraints":     {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-map-keys": []any{"topologyKey", "whenUnsatisfiable"}, "x-kubernetes-list-type": "map", "x-kubernetes-patch-merge-key": "topologyKey", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1TopologySpreadConstraint}}}}},
			"volumes":                       {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge,retainKeys"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1Volume}}}}},
		}}},
		"io.k8s.api.core.v1.PodStatus": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"conditions":                 {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1PodCondition}}}}},
			"containerStatuses":          {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1ContainerStatus}}}}},
			"ephemeralContainerStatuses": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1ContainerStatus}}}}},
			"hostIP":                     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"initContainerStatuses":      {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1ContainerStatus}}}}},
			"message":                    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"nominatedNodeName":          {SchemaProps: spec.SchemaProps{Type: typeString}},
			"phase":                      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"podIP":                      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"podIPs":                     {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "ip", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1PodIP}}}}},
			"qosClass":                   {SchemaProps: spec.SchemaProps{Type: typeString}},
			"reason":                     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"startTime":                  {SchemaProps: spec.SchemaProps{Ref: v1Time}},
		}}},
		"io.k8s.api.core.v1.PodTemplateSpec": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"metadata": {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
			"spec":     {SchemaProps: spec.SchemaProps{Ref: v1PodSpec}},
		}}},
		"io.k8s.api.core.v1.PortStatus": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"port", "protocol"}, Properties: map[string]spec.Schema{
			"error":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"port":     {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"protocol": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PortworxVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"volumeID"}, Properties: map[string]spec.Schema{
			"fsType":   {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"volumeID": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.PreferredSchedulingTerm": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"weight", "preference"}, Properties: map[string]spec.Schema{
			"preference": {SchemaProps: spec.SchemaProps{Ref: v1NodeSelectorTerm}},
			"weight":     {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
		}}},
		"io.k8s.api.core.v1.Probe": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"exec":                          {SchemaProps: spec.SchemaProps{Ref: v1ExecAction}},
			"failureThreshold":              {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"httpGet":                       {SchemaProps: spec.SchemaProps{Ref: v1HTTPGetAction}},
			"initialDelaySeconds":           {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"periodSeconds":                 {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"successThreshold":              {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"tcpSocket":                     {SchemaProps: spec.SchemaProps{Ref: v1TCPSocketAction}},
			"terminationGracePeriodSeconds": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"timeoutSeconds":                {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
		}}},
		"io.k8s.api.core.v1.ProjectedVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"defaultMode": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"sources":     {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1VolumeProjection}}}}},
		}}},
		"io.k8s.api.core.v1.QuobyteVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"registry", "volume"}, Properties: map[string]spec.Schema{
			"group":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"registry": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"tenant":   {SchemaProps: spec.SchemaProps{Type: typeString}},
			"user":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"volume":   {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.RBDVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"monitors", "image"}, Properties: map[string]spec.Schema{
			"fsType":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"image":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"keyring":   {SchemaProps: spec.SchemaProps{Type: typeString}},
			"monitors":  {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"pool":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly":  {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"secretRef": {SchemaProps: spec.SchemaProps{Ref: v1LocalObjectReference}},
			"user":      {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ResourceFieldSelector": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"resource"}, Properties: map[string]spec.Schema{
			"containerName": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"divisor":       {SchemaProps: spec.SchemaProps{Ref: resourceQuantity}},
			"resource":      {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ResourceRequirements": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"limits":   {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: resourceQuantity}}}}},
			"requests": {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: resourceQuantity}}}}},
		}}},
		"io.k8s.api.core.v1.SELinuxOptions": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"level": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"role":  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"type":  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"user":  {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ScaleIOVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"gateway", "system", "secretRef"}, Properties: map[string]spec.Schema{
			"fsType":           {SchemaProps: spec.SchemaProps{Type: typeString}},
			"gateway":          {SchemaProps: spec.SchemaProps{Type: typeString}},
			"protectionDomain": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly":         {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"secretRef":        {SchemaProps: spec.SchemaProps{Ref: v1LocalObjectReference}},
			"sslEnabled":       {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"storageMode":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"storagePool":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"system":           {SchemaProps: spec.SchemaProps{Type: typeString}},
			"volumeName":       {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.SeccompProfile": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-unions": []any{map[string]any{"discriminator": "type", "fields-to-discriminateBy": map[string]any{"localhostProfile": "LocalhostProfile"}}}}}, SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"type"}, Properties: map[string]spec.Schema{
			"localhostProfile": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"type":             {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.Secret": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{"group": "", "kind": "Secret", "version": "v1"}}}}, SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"data":       {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString, Format: "byte"}}}}},
			"immutable":  {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"kind":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"metadata":   {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
			"stringData": {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"type":       {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.SecretEnvSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"name":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"optional": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.SecretKeySelector": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"key"}, Properties: map[string]spec.Schema{
			"key":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"name":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"optional": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.SecretProjection": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"items":    {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1KeyToPath}}}}},
			"name":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"optional": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
		}}},
		"io.k8s.api.core.v1.SecretVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"defaultMode": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"items":       {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1KeyToPath}}}}},
			"optional":    {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"secretName":  {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.SecurityContext": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"allowPrivilegeEscalation": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"capabilities":             {SchemaProps: spec.SchemaProps{Ref: v1Capabilities}},
			"privileged":               {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"procMount":                {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnlyRootFilesystem":   {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"runAsGroup":               {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"runAsNonRoot":             {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"runAsUser":                {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"seLinuxOptions":           {SchemaProps: spec.SchemaProps{Ref: v1SELinuxOptions}},
			"seccompProfile":           {SchemaProps: spec.SchemaProps{Ref: v1SeccompProfile}},
			"windowsOptions":           {SchemaProps: spec.SchemaProps{Ref: v1WindowsSecurityContextOptions}},
		}}},
		"io.k8s.api.core.v1.Service": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{"group": "", "kind": "Service", "version": "v1"}}}}, SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"kind":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"metadata":   {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
			"spec":       {SchemaProps: spec.SchemaProps{Ref: v1ServiceSpec}},
			"status":     {SchemaProps: spec.SchemaProps{Ref: v1ServiceStatus}},
		}}},
		"io.k8s.api.core.v1.ServiceAccount": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{"group": "", "kind": "ServiceAccount", "version": "v1"}}}}, SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion":                   {SchemaProps: spec.SchemaProps{Type: typeString}},
			"automountServiceAccountToken": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"imagePullSecrets":             {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1LocalObjectReference}}}}},
			"kind":                         {SchemaProps: spec.SchemaProps{Type: typeString}},
			"metadata":                     {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
			"secrets":                      {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1ObjectReference}}}}},
		}}},
		"io.k8s.api.core.v1.ServiceAccountTokenProjection": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"path"}, Properties: map[string]spec.Schema{
			"audience":          {SchemaProps: spec.SchemaProps{Type: typeString}},
			"expirationSeconds": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"path":              {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ServicePort": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"port"}, Properties: map[string]spec.Schema{
			"appProtocol": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"name":        {SchemaProps: spec.SchemaProps{Type: typeString}},
			"nodePort":    {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"port":        {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"protocol":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"targetPort":  {SchemaProps: spec.SchemaProps{Ref: intstrIntOrString}},
		}}},
		"io.k8s.api.core.v1.ServiceSpec": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"allocateLoadBalancerNodePorts": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"clusterIP":                     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"clusterIPs":                    {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-type": "atomic"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"externalIPs":                   {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"externalName":                  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"externalTrafficPolicy":         {SchemaProps: spec.SchemaProps{Type: typeString}},
			"healthCheckNodePort":           {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"internalTrafficPolicy":         {SchemaProps: spec.SchemaProps{Type: typeString}},
			"ipFamilies":                    {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-type": "atomic"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"ipFamilyPolicy":                {SchemaProps: spec.SchemaProps{Type: typeString}},
			"loadBalancerClass":             {SchemaProps: spec.SchemaProps{Type: typeString}},
			"loadBalancerIP":                {SchemaProps: spec.SchemaProps{Type: typeString}},
			"loadBalancerSourceRanges":      {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"ports":                         {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-map-keys": []any{"port", "protocol"}, "x-kubernetes-list-type": "map", "x-kubernetes-patch-merge-key": "port", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1ServicePort}}}}},
			"publishNotReadyAddresses":      {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"selector":                      {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"sessionAffinity":               {SchemaProps: spec.SchemaProps{Type: typeString}},
			"sessionAffinityConfig":         {SchemaProps: spec.SchemaProps{Ref: v1SessionAffinityConfig}},
			"topologyKeys":                  {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"type":                          {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.ServiceStatus": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"conditions":   {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-map-keys": []any{"type"}, "x-kubernetes-list-type": "map", "x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1Condition}}}}},
			"loadBalancer": {SchemaProps: spec.SchemaProps{Ref: v1LoadBalancerStatus}},
		}}},
		"io.k8s.api.core.v1.SessionAffinityConfig": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"clientIP": {SchemaProps: spec.SchemaProps{Ref: v1ClientIPConfig}},
		}}},
		"io.k8s.api.core.v1.StorageOSVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"fsType":          {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly":        {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"secretRef":       {SchemaProps: spec.SchemaProps{Ref: v1LocalObjectReference}},
			"volumeName":      {SchemaProps: spec.SchemaProps{Type: typeString}},
			"volumeNamespace": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.Sysctl": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"name", "value"}, Properties: map[string]spec.Schema{
			"name":  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"value": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.TCPSocketAction": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"port"}, Properties: map[string]spec.Schema{
			"host": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"port": {SchemaProps: spec.SchemaProps{Ref: intstrIntOrString}},
		}}},
		"io.k8s.api.core.v1.Toleration": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"effect":            {SchemaProps: spec.SchemaProps{Type: typeString}},
			"key":               {SchemaProps: spec.SchemaProps{Type: typeString}},
			"operator":          {SchemaProps: spec.SchemaProps{Type: typeString}},
			"tolerationSeconds": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"value":             {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.TopologySpreadConstraint": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"maxSkew", "topologyKey", "whenUnsatisfiable"}, Properties: map[string]spec.Schema{
			"labelSelector":     {SchemaProps: spec.SchemaProps{Ref: v1LabelSelector}},
			"maxSkew":           {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
			"topologyKey":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"whenUnsatisfiable": {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.TypedLocalObjectReference": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"kind", "name"}, Properties: map[string]spec.Schema{
			"apiGroup": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"kind":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"name":     {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.Volume": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"name"}, Properties: map[string]spec.Schema{
			"awsElasticBlockStore":  {SchemaProps: spec.SchemaProps{Ref: v1AWSElasticBlockStoreVolumeSource}},
			"azureDisk":             {SchemaProps: spec.SchemaProps{Ref: v1AzureDiskVolumeSource}},
			"azureFile":             {SchemaProps: spec.SchemaProps{Ref: v1AzureFileVolumeSource}},
			"cephfs":                {SchemaProps: spec.SchemaProps{Ref: v1CephFSVolumeSource}},
			"cinder":                {SchemaProps: spec.SchemaProps{Ref: v1CinderVolumeSource}},
			"configMap":             {SchemaProps: spec.SchemaProps{Ref: v1ConfigMapVolumeSource}},
			"csi":                   {SchemaProps: spec.SchemaProps{Ref: v1CSIVolumeSource}},
			"downwardAPI":           {SchemaProps: spec.SchemaProps{Ref: v1DownwardAPIVolumeSource}},
			"emptyDir":              {SchemaProps: spec.SchemaProps{Ref: v1EmptyDirVolumeSource}},
			"ephemeral":             {SchemaProps: spec.SchemaProps{Ref: v1EphemeralVolumeSource}},
			"fc":                    {SchemaProps: spec.SchemaProps{Ref: v1FCVolumeSource}},
			"flexVolume":            {SchemaProps: spec.SchemaProps{Ref: v1FlexVolumeSource}},
			"flocker":               {SchemaProps: spec.SchemaProps{Ref: v1FlockerVolumeSource}},
			"gcePersistentDisk":     {SchemaProps: spec.SchemaProps{Ref: v1GCEPersistentDiskVolumeSource}},
			"gitRepo":               {SchemaProps: spec.SchemaProps{Ref: v1GitRepoVolumeSource}},
			"glusterfs":             {SchemaProps: spec.SchemaProps{Ref: v1GlusterfsVolumeSource}},
			"hostPath":              {SchemaProps: spec.SchemaProps{Ref: v1HostPathVolumeSource}},
			"iscsi":                 {SchemaProps: spec.SchemaProps{Ref: v1ISCSIVolumeSource}},
			"name":                  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"nfs":                   {SchemaProps: spec.SchemaProps{Ref: v1NFSVolumeSource}},
			"persistentVolumeClaim": {SchemaProps: spec.SchemaProps{Ref: v1PersistentVolumeClaimVolumeSource}},
			"photonPersistentDisk":  {SchemaProps: spec.SchemaProps{Ref: v1PhotonPersistentDiskVolumeSource}},
			"portworxVolume":        {SchemaProps: spec.SchemaProps{Ref: v1PortworxVolumeSource}},
			"projected":             {SchemaProps: spec.SchemaProps{Ref: v1ProjectedVolumeSource}},
			"quobyte":               {SchemaProps: spec.SchemaProps{Ref: v1QuobyteVolumeSource}},
			"rbd":                   {SchemaProps: spec.SchemaProps{Ref: v1RBDVolumeSource}},
			"scaleIO":               {SchemaProps: spec.SchemaProps{Ref: v1ScaleIOVolumeSource}},
			"secret":                {SchemaProps: spec.SchemaProps{Ref: v1SecretVolumeSource}},
			"storageos":             {SchemaProps: spec.SchemaProps{Ref: v1StorageOSVolumeSource}},
			"vsphereVolume":         {SchemaProps: spec.SchemaProps{Ref: v1VsphereVirtualDiskVolumeSource}},
		}}},
		"io.k8s.api.core.v1.VolumeDevice": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"name", "devicePath"}, Properties: map[string]spec.Schema{
			"devicePath": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"name":       {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.VolumeMount": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"name", "mountPath"}, Properties: map[string]spec.Schema{
			"mountPath":        {SchemaProps: spec.SchemaProps{Type: typeString}},
			"mountPropagation": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"name":             {SchemaProps: spec.SchemaProps{Type: typeString}},
			"readOnly":         {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"subPath":          {SchemaProps: spec.SchemaProps{Type: typeString}},
			"subPathExpr":      {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.VolumeProjection": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"configMap":           {SchemaProps: spec.SchemaProps{Ref: v1ConfigMapProjection}},
			"downwardAPI":         {SchemaProps: spec.SchemaProps{Ref: v1DownwardAPIProjection}},
			"secret":              {SchemaProps: spec.SchemaProps{Ref: v1SecretProjection}},
			"serviceAccountToken": {SchemaProps: spec.SchemaProps{Ref: v1ServiceAccountTokenProjection}},
		}}},
		"io.k8s.api.core.v1.VsphereVirtualDiskVolumeSource": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"volumePath"}, Properties: map[string]spec.Schema{
			"fsType":            {SchemaProps: spec.SchemaProps{Type: typeString}},
			"storagePolicyID":   {SchemaProps: spec.SchemaProps{Type: typeString}},
			"storagePolicyName": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"volumePath":        {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.api.core.v1.WeightedPodAffinityTerm": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"weight", "podAffinityTerm"}, Properties: map[string]spec.Schema{
			"podAffinityTerm": {SchemaProps: spec.SchemaProps{Ref: v1PodAffinityTerm}},
			"weight":          {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int32"}},
		}}},
		"io.k8s.api.core.v1.WindowsSecurityContextOptions": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"gmsaCredentialSpec":     {SchemaProps: spec.SchemaProps{Type: typeString}},
			"gmsaCredentialSpecName": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"runAsUserName":          {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.apimachinery.pkg.api.resource.Quantity": {SchemaProps: spec.SchemaProps{Type: typeString}},
		"io.k8s.apimachinery.pkg.apis.meta.v1.Condition": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"type", "status", "lastTransitionTime", "reason", "message"}, Properties: map[string]spec.Schema{
			"lastTransitionTime": {SchemaProps: spec.SchemaProps{Ref: v1Time}},
			"message":            {SchemaProps: spec.SchemaProps{Type: typeString}},
			"observedGeneration": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"reason":             {SchemaProps: spec.SchemaProps{Type: typeString}},
			"status":             {SchemaProps: spec.SchemaProps{Type: typeString}},
			"type":               {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": {SchemaProps: spec.SchemaProps{Type: typeObject}},
		"io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-map-type": "atomic"}}, SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"matchExpressions": {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1LabelSelectorRequirement}}}}},
			"matchLabels":      {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
		}}},
		"io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"key", "operator"}, Properties: map[string]spec.Schema{
			"key":      {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "key", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeString}},
			"operator": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"values":   {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
		}}},
		"io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"fieldsType": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"fieldsV1":   {SchemaProps: spec.SchemaProps{Ref: v1FieldsV1}},
			"manager":    {SchemaProps: spec.SchemaProps{Type: typeString}},
			"operation":  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"time":       {SchemaProps: spec.SchemaProps{Ref: v1Time}},
		}}},
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"annotations":                {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"clusterName":                {SchemaProps: spec.SchemaProps{Type: typeString}},
			"creationTimestamp":          {SchemaProps: spec.SchemaProps{Ref: v1Time}},
			"deletionGracePeriodSeconds": {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"deletionTimestamp":          {SchemaProps: spec.SchemaProps{Ref: v1Time}},
			"finalizers":                 {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"generateName":               {SchemaProps: spec.SchemaProps{Type: typeString}},
			"generation":                 {SchemaProps: spec.SchemaProps{Type: typeInteger, Format: "int64"}},
			"labels":                     {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: typeString}}}}},
			"managedFields":              {SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1ManagedFieldsEntry}}}}},
			"name":                       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"namespace":                  {SchemaProps: spec.SchemaProps{Type: typeString}},
			"ownerReferences":            {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "uid", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1OwnerReference}}}}},
			"resourceVersion":            {SchemaProps: spec.SchemaProps{Type: typeString}},
			"selfLink":                   {SchemaProps: spec.SchemaProps{Type: typeString}},
			"uid":                        {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference": {SchemaProps: spec.SchemaProps{Type: typeObject, Required: []string{"apiVersion", "kind", "name", "uid"}, Properties: map[string]spec.Schema{
			"apiVersion":         {SchemaProps: spec.SchemaProps{Type: typeString}},
			"blockOwnerDeletion": {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"controller":         {SchemaProps: spec.SchemaProps{Type: typeBoolean}},
			"kind":               {SchemaProps: spec.SchemaProps{Type: typeString}},
			"name":               {SchemaProps: spec.SchemaProps{Type: typeString}},
			"uid":                {SchemaProps: spec.SchemaProps{Type: typeString}},
		}}},
		"io.k8s.apimachinery.pkg.apis.meta.v1.Time":       {SchemaProps: spec.SchemaProps{Type: typeString, Format: "date-time"}},
		"io.k8s.apimachinery.pkg.util.intstr.IntOrString": {SchemaProps: spec.SchemaProps{Type: typeString, Format: "int-or-string"}},
		"org.kubeflow.trainer.v1alpha1.ReplicatedJobPatch": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"template": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
				"spec": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
					"template": {SchemaProps: spec.SchemaProps{Ref: v1PodTemplateSpec}},
				}}},
			}}},
		}}},
		"org.kubeflow.trainer.v1alpha1.RuntimePatch": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"trainingRuntimeSpec": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
				"template": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
					"spec": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
						"replicatedJobs": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1alpha1ReplicatedJobPatch}}}}},
					}}},
				}}},
			}}},
		}}},
		"org.kubeflow.trainer.v1alpha1.TrainJob": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{"group": "trainer.kubeflow.org", "kind": "TrainJob", "version": "v1alpha1"}}}}, SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"kind":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"metadata":   {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
			"spec":       {SchemaProps: spec.SchemaProps{Ref: v1alpha1TrainJobSpec}},
		}}},
		"org.kubeflow.trainer.v1alpha1.TrainJobSpec": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"runtimePatches": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "manager", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1alpha1RuntimePatch}}}}},
			"trainer": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
				"env": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}, SchemaProps: spec.SchemaProps{Type: typeArray, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v1EnvVar}}}}},
			}}},
		}}},
		"org.kubeflow.v1.PyTorchJob": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{"group": "kubeflow.org", "kind": "PyTorchJob", "version": "v1"}}}}, SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"kind":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"metadata":   {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
			"spec":       {SchemaProps: spec.SchemaProps{Ref: v1PyTorchJobSpec}},
		}}},
		"org.kubeflow.v1.PyTorchJobSpec": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"pytorchReplicaSpecs": {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v2beta1ReplicaSpec}}}}},
		}}},
		"org.kubeflow.v2beta1.MPIJob": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{"group": "kubeflow.org", "kind": "MPIJob", "version": "v2beta1"}}}}, SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"apiVersion": {SchemaProps: spec.SchemaProps{Type: typeString}},
			"kind":       {SchemaProps: spec.SchemaProps{Type: typeString}},
			"metadata":   {SchemaProps: spec.SchemaProps{Ref: v1ObjectMeta}},
			"spec":       {SchemaProps: spec.SchemaProps{Ref: v2beta1MPIJobSpec}},
		}}},
		"org.kubeflow.v2beta1.MPIJobSpec": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"mpiReplicaSpecs": {SchemaProps: spec.SchemaProps{Type: typeObject, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v2beta1ReplicaSpec}}}}},
		}}},
		"org.kubeflow.v2beta1.ReplicaSpec": {SchemaProps: spec.SchemaProps{Type: typeObject, Properties: map[string]spec.Schema{
			"template": {SchemaProps: spec.SchemaProps{Ref: v1PodTemplateSpec}},
		}}},
	}
}
