Gem::Specification.new do |spec|
  spec.name          = "slugify_plus"
  spec.version       = "0.1.0"
  spec.authors       = ["Your Name"]
  spec.summary       = "Turn titles into URL slugs, transliterating accents."
  spec.homepage      = "https://github.com/your-org/slugify_plus"
  spec.license       = "MIT"
  spec.required_ruby_version = ">= 3.1"
  spec.metadata["rubygems_mfa_required"] = "true"
  spec.files = Dir.chdir(__dir__) { `git ls-files -z`.split("\x0").grep(%r{\A(lib|sig)/}) }
  spec.require_paths = ["lib"]

  spec.add_development_dependency "rspec", "~> 3.13"
  spec.add_development_dependency "rubocop", "~> 1.66"
end
