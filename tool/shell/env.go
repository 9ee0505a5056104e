package shell

import (
	"regexp"
	"strings"
)

// Secrets are kept out of commands' environments: a model that can run
// `env` or `echo $OPENAI_API_KEY` must not read them, nor a program it
// runs send them anywhere.
var (
	secretExact = set("GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "NPM_TOKEN", "HF_TOKEN",
		"HUGGING_FACE_HUB_TOKEN", "DATABASE_URL", "MYSQL_PWD", "PGPASSWORD", "PGPASSFILE",
		"DOCKER_AUTH_CONFIG", "KUBECONFIG", "NETRC", "VAULT_TOKEN", "SENTRY_DSN", "NGROK_AUTHTOKEN",
		"TWINE_PASSWORD", "CARGO_REGISTRY_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS")
	secretPrefixes = []string{"AWS_", "AZURE_", "ARM_CLIENT", "GOOGLE_", "GCP_", "GCLOUD_",
		"OPENAI_", "ANTHROPIC_", "GEMINI_", "MISTRAL_", "COHERE_", "GROQ_", "DEEPSEEK_",
		"OPENROUTER_", "TOGETHER_", "FIREWORKS_", "PERPLEXITY_", "XAI_", "REPLICATE_", "VOYAGE_",
		"HEARTH_", "STRIPE_", "TWILIO_", "SLACK_", "DISCORD_", "CLOUDFLARE_", "DIGITALOCEAN_",
		"HEROKU_", "NETLIFY_", "VERCEL_", "SUPABASE_", "FIREBASE_", "PULUMI_", "TF_TOKEN_",
		"LANGCHAIN_", "LANGSMITH_", "WANDB_"}
	secretParts = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY",
		"API_KEY", "ACCESS_KEY", "ACCESSKEY", "PRIVATE_KEY", "PRIVATEKEY", "CREDENTIAL",
		"SESSION_KEY", "AUTH_KEY", "CLIENT_KEY", "SIGNING_KEY", "ENCRYPTION_KEY", "MASTER_KEY",
		"COOKIE", "BEARER"}
	secretSuffixes = []string{"_KEY", "_KEYS", "_PWD", "_PASS", "_AUTH", "_DSN"}
	// Values that are secrets whatever they are called: URLs with a
	// password, and well-known key formats.
	secretValue = regexp.MustCompile(`://[^/@\s:]+:[^/@\s]+@|^(sk-|sk_live_|rk_live_|ghp_|gho_|ghu_|ghs_|github_pat_|glpat-|xox[abposr]-|hf_[A-Za-z]{20}|AKIA[0-9A-Z]{12}|AIza[0-9A-Za-z_-]{20}|ya29\.)`)
)

// IsSecret reports whether an environment variable looks like it holds a
// secret, by its name or its value.
func IsSecret(name, value string) bool {
	n := strings.ToUpper(name)
	if secretExact[n] {
		return true
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, p := range secretParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return secretValue.MatchString(value)
}

// ScrubEnv returns env (NAME=value entries) without the secrets, except
// the names listed in keep, and the names it removed.
func ScrubEnv(env []string, keep []string) (kept, removed []string) {
	keepSet := set(keep...)
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if !keepSet[name] && IsSecret(name, value) {
			removed = append(removed, name)
			continue
		}
		kept = append(kept, kv)
	}
	return kept, removed
}
