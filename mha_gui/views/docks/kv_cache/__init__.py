"""The KV-cache dock: MHA, GQA and MQA side by side for the layer being edited."""
