package zerostatreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
)

// Type is the receiver's type in a Collector configuration: `zerostat`.
var Type = component.MustNewType("zerostat")

// Stability of the metrics receiver.
const Stability = component.StabilityLevelAlpha

// NewFactory returns the factory of the zerostat receiver (metrics only).
func NewFactory() receiver.Factory {
	return receiver.NewFactory(Type, createDefaultConfig, receiver.WithMetrics(createMetrics, Stability))
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	return newReceiver(cfg.(*Config), set, next)
}
