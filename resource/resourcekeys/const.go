// Package resourcekeys holds well-known resource types and label keys,
// OpenCensus's go.opencensus.io/resource/resourcekeys (v0.24.0).
// Constants only: no cost.
package resourcekeys

// Kubernetes resources.
const (
	K8SType = "k8s"

	// K8SKeyClusterName names the Kubernetes cluster (Kubernetes has no
	// cluster name itself: any meaningful value, e.g. GKE's cluster name).
	K8SKeyClusterName    = "k8s.cluster.name"
	K8SKeyNamespaceName  = "k8s.namespace.name"
	K8SKeyPodName        = "k8s.pod.name"
	K8SKeyDeploymentName = "k8s.deployment.name"
)

// Container resources.
const (
	ContainerType = "container"

	// ContainerKeyName identifies the container.
	ContainerKeyName      = "container.name"
	ContainerKeyImageName = "container.image.name"
	ContainerKeyImageTag  = "container.image.tag"
)

// Cloud resources.
const (
	CloudType = "cloud"

	CloudKeyProvider  = "cloud.provider"
	CloudKeyAccountID = "cloud.account.id"
	CloudKeyRegion    = "cloud.region"
	CloudKeyZone      = "cloud.zone"

	// Cloud providers, values of CloudKeyProvider.
	CloudProviderAWS   = "aws"
	CloudProviderGCP   = "gcp"
	CloudProviderAZURE = "azure"
)

// Host resources.
const (
	HostType = "host"

	// HostKeyName identifies the host.
	HostKeyName = "host.name"

	// HostKeyHostName is the name the 'hostname' command prints on the host.
	HostKeyHostName = "host.hostname"
	HostKeyID       = "host.id"
	HostKeyType     = "host.type"
)
