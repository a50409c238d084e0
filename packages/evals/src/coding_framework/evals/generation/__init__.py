"""Generation backends (a local Hugging Face model, any OpenAI-compatible endpoint) and the
resumable driver that turns a benchmark's prompts into a samples file."""
